"""Managing one subscription: see it, change its payment day, replace its card, cancel it.
Each change is a conditional write; a stale form or a concurrent change gets a kind message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods, require_safe

from billing import access
from billing.forms import CancelForm, ChangeDayForm, ReplaceCardForm
from billing.models import AuditAction, Subscription
from billing.pages import actor, bound_data, subscription_or_404, today
from billing.schedule import months_before, next_payment_date, rescheduled_payment_date

from .cards import tokenize_card_form
from .common import RECEIPT_MONTHS, STALE_MESSAGE, customer_required

PAYMENT_IN_PROGRESS_MESSAGE = (
    "A payment for this subscription is due today or still being taken, so its day can't move "
    "right now. You can change the payment day once that payment has gone through."
)


def _apply_change(request: HttpRequest, sub: Subscription, form: Any, action: AuditAction,
                  change: Callable[[], object], *, retry_page: str) -> HttpResponse | None:
    """Make an audited change from a valid form. Returns the redirect to show when the
    change could not be made (a stale form, a concurrent change, a payment in progress),
    or None when it was made."""
    version = form.cleaned_data.get("version")
    try:
        if version is not None and version != sub.Version:
            raise access.ConditionFailed(sub.SK)  # the form was read before another change
        with access.audited_change(sub, actor=actor(request), action=action):
            change()
    except access.PaymentInProgress:
        messages.warning(request, PAYMENT_IN_PROGRESS_MESSAGE)
        return redirect("subscription", sub_id=sub.sub_id)
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect(retry_page, sub_id=sub.sub_id)
    return None


@require_safe
@customer_required
def subscription_detail(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    return render(request, "portal/subscription.html", {"sub": sub})


@require_http_methods(["GET", "POST"])
@customer_required
def change_day(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is nothing to change.")
        return redirect("subscription", sub_id=sub_id)
    # The same rule access.change_payment_day applies, shown before the customer chooses.
    unpaid = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    next_dates = {d: rescheduled_payment_date(d, unpaid, today()) for d in range(1, 32)}
    form = ChangeDayForm(bound_data(request), next_dates=next_dates,
                         initial={"payment_day": sub.PaymentDay, "version": sub.Version})
    if request.method == "POST" and form.is_valid():
        refused = _apply_change(
            request, sub, form, AuditAction.PAYMENT_DAY_CHANGED,
            lambda: access.change_payment_day(sub, form.cleaned_data["payment_day"], today=today(),
                                              reminder_days_before=settings.REMINDER_DAYS_BEFORE),
            retry_page="change_day")
        if refused:
            return refused
        next_date = date.fromisoformat(sub.NextPaymentDate)
        messages.success(request, f"Your payment day is now the {sub.PaymentDay}. "
                                  f"Your next payment is on {next_date:%-d %B %Y}.")
        return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/change_day.html", {"sub": sub, "form": form})


@sensitive_post_parameters("card_number", "cvc")
@require_http_methods(["GET", "POST"])
@customer_required
@sensitive_variables()  # the card form's frames hold the number and CVC (see cards.py)
def replace_card(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is no card to replace.")
        return redirect("subscription", sub_id=sub_id)
    form = ReplaceCardForm(bound_data(request), today=today(), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid() and (card := tokenize_card_form(form)):
        refused = _apply_change(
            request, sub, form, AuditAction.CARD_REPLACED,
            lambda: access.replace_card(sub, card, form.billing_address_text()),
            retry_page="replace_card")
        if refused:
            return refused
        messages.success(request, f"Future payments will use your {card.brand} ending in {card.last4}.")
        return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/replace_card.html", {"sub": sub, "form": form})


@require_http_methods(["GET", "POST"])
@customer_required
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        return redirect("cancelled", sub_id=sub_id)
    form = CancelForm(bound_data(request), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        refused = _apply_change(
            request, sub, form, AuditAction.SUBSCRIPTION_CANCELLED,
            lambda: access.cancel_subscription(sub, reason="customer"), retry_page="cancel")
        if refused:
            return refused
        messages.success(request, f"Your {sub.ProductName or sub.SKU} subscription is cancelled.")
        return redirect("cancelled", sub_id=sub_id)
    return render(request, "portal/cancel.html", {"sub": sub, "form": form})


@require_safe
@customer_required
def cancelled(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """After cancelling: which period was the last one paid, from the receipts."""
    sub = subscription_or_404(account_id, sub_id)
    if sub.is_live:
        return redirect("subscription", sub_id=sub_id)
    end = today()
    receipts = [r for r in access.get_receipts_by_account(account_id, months_before(end, RECEIPT_MONTHS), end)
                if r.sub_id == sub.sub_id]
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
