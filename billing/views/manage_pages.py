"""Managing one subscription: see it, change its payment day, replace its card, and the
page after it ended (cancelling and pausing: ``lifecycle_pages``).
Each change is a conditional write made by ``billing.actions.subscriptions`` (audit event and e-mail
included); a stale form or a concurrent change gets a kind message.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from billing import access
from billing.actions import subscriptions as actions
from billing.customers import card_customer, card_entry_page, customer_required
from billing.forms import ChangeDayForm, ReplaceCardForm
from billing.models import Subscription
from billing.operations import payments
from billing.operations.final_usage import last_usage_charge
from billing.operations.outcomes import PaymentOutcome, PaymentStatus
from billing.rules.cadence_words import NO_PAYMENT_DAY, next_payment_words
from billing.rules.lifecycle import last_usage_billed_on
from billing.rules.metered_items import item_words
from billing.rules.price_objects import price_words_of
from billing.rules.projection import usage_words
from billing.rules.schedule import (
    MAX_PAYMENT_DAY,
    MIN_PAYMENT_DAY,
    cadence_of,
    months_before,
    next_payment_date,
)
from billing.rules.switch import switch_pending, usage_only
from billing.views.common import (
    RECEIPT_MONTHS,
    STALE_MESSAGE,
    changed_since,
    live_subscription,
    subscription_or_404,
)
from billing.views.wallet_pages import card_choice
from core.cardforms import tokenize_card_form
from core.localformat import local_date
from core.money import format_with_symbol
from core.ordinals import day_of_month
from core.pages import actor, bound_data, today
from core.payments.errors import GatewayError


def _apply_change(request: HttpRequest, sub: Subscription, form: Any, change: Callable[[], object], *,
                  retry_page: str) -> HttpResponse | None:
    """Make a change from a valid form (the action records its own audit event and
    e-mail). Returns the redirect to show when the change could not be made (a stale
    form, a concurrent change), or None when it was made."""
    version = form.cleaned_data.get("version")
    try:
        if version is not None and version != sub.Version:
            raise access.ConditionFailed(sub.SK)  # the form was read before another change
        change()
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect(retry_page, sub_id=sub.sub_id)
    return None


@require_safe
@customer_required
def subscription_detail(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    return render(request, "portal/subscription.html", subscription_context(sub))


def subscription_context(sub: Subscription) -> dict[str, Any]:
    """The subscription page's context (also for a stale form's answer, drawn from it as it is now)."""
    # Its payments and failed attempts: one Query of the account's history, kept to this one.
    end = today()
    start = months_before(end, RECEIPT_MONTHS)
    history = access.get_payment_history(sub.account_id, start, end)
    # a yearly's receipt stays listed while its period is in force (read by key)
    receipts = access.with_receipts_in_force(history.receipts, [sub], start, end)
    return {
        "sub": sub, "sub_receipts": [r for r in receipts if r.sub_id == sub.sub_id],
        "failed": [f for f in history.failed if f.sub_id == sub.sub_id],
        # a downgrade not yet in force: the product paid for until the next payment
        "switch_pending": bool(sub.PreviousProductName) and switch_pending(sub, end),
        "usage_alone": usage_only(sub), "usage": _usage(sub)}


def _usage(sub: Subscription) -> dict[str, Any] | None:
    """A live subscription's metered prices in words and, when its next payment bills
    usage, that payment as it stands (``payments.next_charge``, the estimate the reminder
    announces and the charge itself): about its amount, the usage so far and its last day.
    None without a metered price. Requests, only then: each price's GetItem, and the
    estimate's (the seller's profile, and each meter's GetItem and Query): the prices read
    once serve both."""
    ending = last_usage_billed_on(sub, today()) is not None
    prices = access.metered_prices(sub) if sub.MeteredPriceId and (sub.is_live or ending) else {}
    if not prices:
        return None
    # one removed says until when it bills, one replacing it from when (docs/USAGE.md)
    words = [item_words(sub, p.PriceId, price_words_of(p), local_date) for p in prices.values()]
    shown: dict[str, Any] = {"words": "; ".join(words)}
    if ending:
        # Cancelled at its period's end: no next payment, but its last usage charge, as it
        # stands (``final_usage.last_usage_charge``, what the run charges the day after).
        coming = last_usage_charge(sub, today(), prices=prices)
        if coming is not None:
            shown["billed_on"] = coming.date
    else:
        coming = payments.next_charge(sub, metered_prices=prices) if sub.NextPaymentDate else None
    if coming is not None and coming.usages:
        shown.update(estimate=gettext("about {amount}").format(amount=format_with_symbol(coming.amount, sub.Currency)),
                     usage_amount=format_with_symbol(coming.usage_amount, sub.Currency),
                     usage_used=usage_words(coming.usages), last_day=coming.usage_last_day)
    return shown


@require_http_methods(["GET", "POST"])
@customer_required
@live_subscription(gettext_lazy("This subscription is cancelled: there is nothing to change."))
def change_day(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    if not sub.NextPaymentDate:  # paused until resumed: no next payment to move
        messages.info(request, gettext("This subscription is paused: resume it first."))
        return redirect("subscription", sub_id=sub.sub_id)
    if not cadence_of(sub).has_payment_day:
        messages.info(request, str(NO_PAYMENT_DAY))
        return redirect("subscription", sub_id=sub.sub_id)
    form = ChangeDayForm(bound_data(request), options=day_options(sub), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        version = form.cleaned_data.get("version")
        try:
            if version is not None and version != sub.Version:
                raise access.ConditionFailed(sub.SK)  # the form was read before another change
            actions.change_payment_day(sub, form.cleaned_data["payment_day"], actor=actor(request))
        except access.ConditionFailed:
            # The page again, drawn from the subscription as it is now (its options and
            # version), the day chosen kept when it is still offered.
            sub = subscription_or_404(account_id, sub.sub_id)
            again = request.POST.copy()
            again["version"] = str(sub.Version)
            return changed_since(request, "portal/change_day.html", {
                "sub": sub, "form": ChangeDayForm(again, options=day_options(sub))})
        start, end = payments.owed_period(sub)
        amount = next_amount_words(sub)
        messages.success(request, _("Your payment day is now the %(day)s. The days you paid for stay paid: the next "
                                    "payment (%(amount)s, on %(date)s) covers %(start)s to %(end)s, prorated by day.") % {
            "day": day_of_month(sub.PaymentDay), "amount": amount, "date": local_date(start, "j F Y"),
            "start": local_date(start, "j F"), "end": local_date(end, "j F Y")})
        return redirect("subscription", sub_id=sub.sub_id)
    return render(request, "portal/change_day.html", {"sub": sub, "form": form})


def next_amount_words(sub: Subscription) -> str:
    """The next payment as the run charges it: the fee owed (``payments.owed_amount``),
    plus the usage of the period for a metered price, which is not known yet."""
    return next_payment_words(format_with_symbol(payments.owed_amount(sub), sub.Currency),
                              metered=bool(sub.MeteredPriceId), usage_alone=usage_only(sub))


def day_options(sub: Subscription) -> list[tuple[int, str]]:
    """Each day the payment could move to (not the current one), labelled with what it
    leads to under the rule access.change_payment_day applies: the next payment keeps its
    date and pays up to the new day's anchor, a month or more on; then payments fall on
    the new day. The amount is the payment run's own (``payments.owed_amount`` of the
    subscription as it would be on that day), so the page says what will be charged."""
    options = []
    for day in range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1):
        if day == sub.PaymentDay:
            continue
        moved = copy.deepcopy(sub)
        moved.PaymentDay = day
        start, end = payments.owed_period(moved)
        options.append((day, gettext("The {day}: next payment {amount} on {date}, then on {first}").format(
            day=day_of_month(day), amount=next_amount_words(moved),
            date=local_date(start, "j M Y"), first=local_date(end + timedelta(days=1), "j M Y"))))
    return options


@card_entry_page()
@live_subscription(gettext_lazy("This subscription is cancelled: there is no card to replace."))
def replace_card(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    # The stored billing address fills the form, so it is kept unless changed.
    address = sub.PaymentDetails.BillingAddress if sub.PaymentDetails else None
    form = ReplaceCardForm(bound_data(request), today=today(), customer=card_customer(account_id),
                           initial={"version": sub.Version, "billing_address": address or ""})
    if request.method == "POST" and form.is_valid() and (card := tokenize_card_form(form)):
        paid_now: list[PaymentOutcome | None] = []
        card_id = access.new_id()  # the new card joins the wallet under this id
        try:
            refused = _apply_change(
                request, sub, form,
                lambda: paid_now.append(actions.replace_card(sub, card, form.billing_address_text(),
                                                             actor=actor(request), today=today(), card_id=card_id)),
                retry_page="replace_card")
        except GatewayError:  # the card is replaced; the overdue payment's retry could not be made
            messages.warning(request, _("Future payments will use your %(brand)s ending in %(last4)s, but our "
                                        "payment provider could not be reached to pay the overdue amount now; "
                                        "we will try again on the next retry date.") % {
                "brand": card.brand, "last4": card.last4})
            return redirect("subscription", sub_id=sub.sub_id)
        if refused:
            return refused
        messages.success(request, _("Future payments will use your %(brand)s ending in %(last4)s.") % {
            "brand": card.brand, "last4": card.last4})
        outcome = paid_now[0] if paid_now else None
        if outcome is not None and outcome.status == PaymentStatus.PAID:
            messages.success(request, _("The overdue payment of %(amount)s went through with the new card.") % {
                "amount": format_with_symbol(outcome.amount or 0, sub.Currency)})
        elif outcome is not None and outcome.status in (PaymentStatus.DECLINED,
                                                        PaymentStatus.CANCELLED):
            messages.warning(request, _("The new card was declined too (%(reason)s).") % {"reason": outcome.reason})
        return redirect("subscription", sub_id=sub.sub_id)
    return render(request, "portal/replace_card.html", {"sub": sub, "form": form, **card_choice(account_id, sub)})


@require_safe
@customer_required
def cancelled(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """After cancelling: which period was the last one paid, from the receipts."""
    sub = subscription_or_404(account_id, sub_id)
    if sub.is_live:
        return redirect("subscription", sub_id=sub_id)
    end = today()
    start = months_before(end, RECEIPT_MONTHS)
    receipts = [r for r in access.with_receipts_in_force(access.get_receipts_by_account(account_id, start, end),
                                                         [sub], start, end)
                if r.sub_id == sub.sub_id]
    last = receipts[0] if receipts else None  # newest first
    last_day = None
    if last is not None and last.PeriodEnd:
        last_day = date.fromisoformat(last.PeriodEnd)
    elif last is not None:  # a receipt from before receipts carried their period
        last_day = next_payment_date(cadence_of(sub), date.fromisoformat(last.BillingDate)) - timedelta(days=1)
    return render(request, "portal/cancelled.html", {
        "sub": sub, "last": last,
        # still running to its period's end with a metered price: its last usage is charged
        "usage_billed_on": last_usage_billed_on(sub, end),
        "period_start": date.fromisoformat(last.BillingDate) if last else None,
        "period_end": last_day,
    })
