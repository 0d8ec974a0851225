"""Managing one subscription: see it, change its payment day, replace its card, cancel it.
Each change is a conditional write; a stale form or a concurrent change gets a kind message.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from billing import access
from billing.forms import CancelForm, ChangeDayForm, ReplaceCardForm
from billing.models import Subscription
from billing.schedule import months_before, next_payment_date, rescheduled_payment_date

from ._common import RECEIPT_MONTHS, STALE_MESSAGE, _posted, actor, customer_required, today
from .cards import _tokenize


def _own_subscription(account_id: str, sub_id: str) -> Subscription:
    sub = access.get_subscription(account_id, sub_id)
    if sub is None:
        raise Http404("no such subscription")
    return sub


def _is_stale(form: Any, sub: Subscription) -> bool:
    version = form.cleaned_data.get("version")
    return version is not None and version != sub.Version


@customer_required
def subscription_detail(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    return render(request, "portal/subscription.html", {"sub": sub})


PAYMENT_IN_PROGRESS_MESSAGE = (
    "A payment for this subscription is due today or still being taken, so its day can't move "
    "right now. You can change the payment day once that payment has gone through."
)


@customer_required
@require_http_methods(["GET", "POST"])
def change_day(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is nothing to change.")
        return redirect("subscription", sub_id=sub_id)
    # The same rule access.change_payment_day applies, shown before the customer chooses.
    unpaid = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    next_dates = {d: rescheduled_payment_date(d, unpaid, today()) for d in range(1, 32)}
    form = ChangeDayForm(_posted(request), next_dates=next_dates,
                         initial={"payment_day": sub.PaymentDay, "version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("change_day", sub_id=sub_id)
        try:
            with access.audited_change(sub, actor=actor(request), action="subscription.payment_day_changed"):
                access.change_payment_day(sub, form.cleaned_data["payment_day"], today=today(),
                                          reminder_days_before=settings.REMINDER_DAYS_BEFORE)
        except access.PaymentInProgress:
            messages.warning(request, PAYMENT_IN_PROGRESS_MESSAGE)
            return redirect("subscription", sub_id=sub_id)
        except access.ConditionFailed:
            messages.warning(request, STALE_MESSAGE)
            return redirect("change_day", sub_id=sub_id)
        next_date = date.fromisoformat(sub.NextPaymentDate)
        messages.success(request, f"Your payment day is now the {sub.PaymentDay}. "
                                  f"Your next payment is on {next_date:%-d %B %Y}.")
        return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/change_day.html", {"sub": sub, "form": form})


@sensitive_post_parameters("card_number", "cvc")
@customer_required
@require_http_methods(["GET", "POST"])
@sensitive_variables()  # the card form's frames hold the number and CVC (see cards.py)
def replace_card(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is no card to replace.")
        return redirect("subscription", sub_id=sub_id)
    form = ReplaceCardForm(_posted(request), today=today(), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("replace_card", sub_id=sub_id)
        card = _tokenize(form)
        if card:
            try:
                with access.audited_change(sub, actor=actor(request), action="subscription.card_replaced"):
                    access.replace_card(sub, card, form.billing_address_text())
            except access.ConditionFailed:
                messages.warning(request, STALE_MESSAGE)
                return redirect("replace_card", sub_id=sub_id)
            messages.success(request, f"Future payments will use your {card.brand} ending in {card.last4}.")
            return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/replace_card.html", {"sub": sub, "form": form})


@customer_required
@require_http_methods(["GET", "POST"])
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        return redirect("cancelled", sub_id=sub_id)
    form = CancelForm(_posted(request), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("cancel", sub_id=sub_id)
        try:
            with access.audited_change(sub, actor=actor(request), action="subscription.cancelled"):
                access.cancel_subscription(sub, reason="customer")
        except access.ConditionFailed:
            messages.warning(request, STALE_MESSAGE)
            return redirect("cancel", sub_id=sub_id)
        messages.success(request, f"Your {sub.ProductName or sub.SKU} subscription is cancelled.")
        return redirect("cancelled", sub_id=sub_id)
    return render(request, "portal/cancel.html", {"sub": sub, "form": form})


@customer_required
def cancelled(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """After cancelling: which period was the last one paid, from the receipts."""
    sub = _own_subscription(account_id, sub_id)
    if sub.is_live:
        return redirect("subscription", sub_id=sub_id)
    end = today()
    receipts = [r for r in access.get_receipts_by_account(account_id, months_before(end, RECEIPT_MONTHS), end)
                if r.SubId == sub.sub_id]
    last = receipts[0] if receipts else None  # newest first
    period_end = None
    if last is not None:
        # A payment on the anchor date pays until the day before the next one.
        period_end = next_payment_date(int(sub.PaymentDay), date.fromisoformat(last.BillingDate)) - timedelta(days=1)
    return render(request, "portal/cancelled.html", {
        "sub": sub, "last": last,
        "period_start": date.fromisoformat(last.BillingDate) if last else None,
        "period_end": period_end,
    })
