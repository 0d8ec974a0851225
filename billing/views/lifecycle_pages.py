"""Ending and pausing a subscription from the portal: cancel (at period end, the
default, or now), keep, pause, resume. Each change is made by
``billing.actions.lifecycle`` (audit event, refund and e-mail included); a stale form or
a concurrent change gets the kind message of the other manage pages.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from billing import access
from billing.actions import lifecycle as lifecycle_actions
from billing.customers import customer_required
from billing.exceptions import PauseRefused
from billing.forms import CancelChoiceForm, PauseForm
from billing.models import Subscription
from billing.operations.final_usage import usage_due
from billing.operations.payments import next_charge
from billing.rules.lifecycle import CancelMode, can_keep, check_pausable, pause_end, state_of, usage_billed_on
from billing.rules.switch import usage_only
from billing.views.common import STALE_MESSAGE, changed_since, subscription_or_404
from billing.views.manage_pages import next_amount_words, subscription_context
from core.localformat import local_date
from core.money import format_with_symbol
from core.pages import actor, bound_data, today


def _fmt(day: date) -> str:
    return local_date(day, "j F Y")  # in the page's language ("14 febbraio 2027")


def _changed(sub: Subscription, version: int | None) -> bool:
    """The form was drawn from an older version of the subscription (another tab)."""
    return version is not None and version != sub.Version


def _posted_version(request: HttpRequest) -> int | None:
    """The subscription's version a one-button form (keep) was drawn from, if it says."""
    try:
        return int(request.POST["version"])
    except (KeyError, ValueError):
        return None


def _free_until(sub: Subscription) -> date | None:
    """The trial's last day while nothing is paid (``PaidThroughDate`` is still ``TrialEnd``:
    the first payment moves it on): then nothing was paid, so nothing is refunded."""
    if sub.TrialEnd and sub.PaidThroughDate == sub.TrialEnd:
        return date.fromisoformat(sub.TrialEnd)
    return None


def _now_label(refund: int | None, currency: str, usage: int = 0) -> str:
    """"Now", with what it refunds: the amount ``cancel_now`` refunds (the same function),
    or that nothing is (a free trial, a payment a coupon took whole); and the usage so far
    it charges (``final_usage.usage_due``, what ``cancel_now`` bills). None: not known,
    for a posted form's check (its words are not shown)."""
    if refund is None:
        return ""
    words = {"amount": format_with_symbol(refund, currency), "usage": format_with_symbol(usage, currency)}
    if refund > 0 and usage > 0:
        return _("Now: it ends today, and %(amount)s is refunded to your card: the share of what you paid for "
                 "the days after today. Your usage so far, %(usage)s, is charged.") % words
    if refund > 0:
        return _("Now: it ends today, and %(amount)s is refunded to your card: the share of what you paid "
                 "for the days after today.") % words
    if usage > 0:
        return _("Now: it ends today. Your usage so far, %(usage)s, is charged; nothing is refunded.") % words
    return _("Now: it ends today. Nothing is refunded, and nothing more is charged.")


def cancel_choices(sub: Subscription, day: date, refund: int | None, usage: int = 0) -> tuple[str | None, str]:
    """The labels of the two ways to end (None for "at period end" when nothing is paid
    after today: then it is the same as now). ``refund``: what ending now refunds
    (``lifecycle.refund_if_cancelled_now``, what ``cancel_now`` refunds); ``usage``: the
    usage so far ending now charges (a metered price's)."""
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    state = state_of(sub, day)
    if paid_through and paid_through > day and state.kind == "cancelling":
        # Already ending at period end (another tab, or earlier): ending now is what is left.
        return None, _now_label(refund, sub.Currency, usage)
    if paid_through and paid_through > day and state.running:
        billed_on = usage_billed_on(sub)
        if _free_until(sub):
            later = _("At the end of your free trial: it runs until %(date)s, and you can keep it until then. "
                      "Nothing is charged.") % {"date": _fmt(paid_through)}
        elif billed_on is not None:
            # Usage is billed in arrears: ending later still charges the usage up to then.
            later = _("At the end of the period: it runs until %(date)s, and you can keep it until then. Your "
                      "usage until then is charged on %(billed)s, and nothing else.") % {
                "date": _fmt(paid_through), "billed": _fmt(billed_on)}
        else:
            later = _("At the end of the period you paid for: it runs until %(date)s, and you can keep it until "
                      "then. Nothing more is charged.") % {"date": _fmt(paid_through)}
        return later, _now_label(refund, sub.Currency, usage)
    if usage > 0:
        return None, _now_label(0, sub.Currency, usage)
    return None, _("Now: it ends today. Nothing more is charged.")


def usage_if_cancelled_now(sub: Subscription, day: date) -> int:
    """What ending ``sub`` now charges for its usage so far (tax included): the amount
    ``cancel_now`` charges, by the same function (``final_usage.usage_due``); 0 without a
    metered price or usage. Reads the price, the meter and the usage (two GetItems and a
    Query), only for a metered subscription."""
    if not sub.MeteredPriceId or not sub.is_live:
        return 0
    due = usage_due(sub, day)
    return due.line.gross if due is not None else 0


def _next_payment(sub) -> dict[str, str]:
    """The amount and date of the payment the schedule now expects (after keep or resume),
    as the batch will charge it, for the page's message."""
    return {"amount": next_amount_words(sub), "date": _fmt(date.fromisoformat(sub.NextPaymentDate))}


@require_http_methods(["GET", "POST"])
@customer_required
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    if not sub.is_live and not can_keep(sub, day):
        return redirect("cancelled", sub_id=sub_id)
    if request.method != "POST":
        return _cancel_page(request, sub, day, None)
    # The posted choice is checked against the choices' values; their words (what "now"
    # refunds: one Query) are read only when the page is drawn.
    period_end_label, now_label = cancel_choices(sub, day, None)
    form = CancelChoiceForm(request.POST, period_end_label=period_end_label, now_label=now_label)
    if not form.is_valid():
        return _cancel_page(request, sub, day, request.POST)
    if _changed(sub, form.cleaned_data.get("version")):
        # Drawn again from the subscription as it is now, keeping the customer's choice
        # (cancel now, its refund, the reason and comment) where it still applies.
        again = request.POST.copy()
        again["version"] = str(sub.Version)
        return _cancel_page(request, sub, day, again, stale=True)
    data = form.cleaned_data
    try:
        if data["when"] == CancelMode.PERIOD_END:
            lifecycle_actions.cancel_at_period_end(sub, today=day, actor=actor(request), reason=data["reason"],
                                                   comment=data["comment"])
        else:
            done = lifecycle_actions.cancel_now(sub, today=day, actor=actor(request), reason=data["reason"],
                                                comment=data["comment"])
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect("cancel", sub_id=sub_id)
    name = sub.ProductName or sub.SKU
    if data["when"] == CancelMode.PERIOD_END:
        _say_cancelled_at_period_end(request, sub, name)
        return redirect("subscription", sub_id=sub_id)
    _say_cancelled_now(request, sub, done, name)
    return redirect("cancelled", sub_id=sub_id)


def _say_cancelled_now(request: HttpRequest, sub: Subscription, done: lifecycle_actions.CancelledNow,
                       name: str) -> None:
    """What a cancel now did: ended; what it refunded or could not refund yet; the usage it
    charged, or could not charge yet (a metered price's)."""
    def money(amount: int) -> str:
        return format_with_symbol(amount, sub.Currency)

    said = [
        (True, messages.success, _("Your %(product)s subscription has ended.") % {"product": name}),
        (done.refunded > 0, messages.success,
         _("%(amount)s for the days after today is refunded to your card.") % {"amount": money(done.refunded)}),
        (bool(done.refund_failures), messages.warning,
         _("The refund of the days after today could not be made just now: our staff will make it and e-mail you.")),
        (done.usage_charged > 0, messages.success,
         _("%(amount)s for your usage up to today is charged to your card.") % {"amount": money(done.usage_charged)}),
        (done.usage_pending, messages.warning,
         _("Your usage up to today could not be charged just now: it will be charged to your card in the next "
           "days.")),
    ]
    for applies, say, text in said:
        if applies:
            say(request, text)


def _say_cancelled_at_period_end(request: HttpRequest, sub: Subscription, name: str) -> None:
    words = {"product": name, "date": _fmt(date.fromisoformat(sub.PaidThroughDate))}
    billed_on = usage_billed_on(sub)
    if billed_on is not None:
        messages.success(request, _("Your %(product)s subscription is cancelled: it runs until %(date)s, and "
                                    "your usage until then is charged on %(billed)s. You can keep it until "
                                    "then.") % {**words, "billed": _fmt(billed_on)})
        return
    messages.success(request, _("Your %(product)s subscription is cancelled: it runs until %(date)s and "
                                "nothing more is charged. You can keep it until then.") % words)


def _cancel_page(request: HttpRequest, sub: Subscription, day: date, data: Any, *, stale: bool = False) -> HttpResponse:
    """The cancel page, its "now" saying what it refunds: ``lifecycle.refund_if_cancelled_now``,
    the function ``cancel_now`` refunds by. ``data``: the posted choice, drawn again."""
    refund = lifecycle_actions.refund_if_cancelled_now(sub, day)
    usage = usage_if_cancelled_now(sub, day)
    period_end_label, now_label = cancel_choices(sub, day, refund, usage)
    form = CancelChoiceForm(data, initial={"version": sub.Version}, period_end_label=period_end_label,
                            now_label=now_label)
    if data is not None:
        form.is_valid()
    context = _cancel_context(sub, form, day, refund)
    if stale:
        return changed_since(request, "portal/cancel.html", context)
    return render(request, "portal/cancel.html", context)


def _cancel_context(sub: Subscription, form: CancelChoiceForm, day: date, refund: int) -> dict:
    # The payment cancelling spares, as the run would take it (the function it charges by).
    coming = next_charge(sub) if sub.is_live and sub.NextPaymentDate else None
    free_until = _free_until(sub)
    return {"sub": sub, "form": form, "state": state_of(sub, day), "next_charge": coming,
            "free_until": free_until, "refund": refund, "usage_only": usage_only(sub),
            # a metered price: ending still charges the usage up to the last day (in arrears)
            "bills_usage": bool(sub.MeteredPriceId) and not free_until}


@require_POST
@customer_required
def keep(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    version = _posted_version(request)
    if not can_keep(sub, day) and (sub.is_live or _changed(sub, version)):
        # Kept (or otherwise changed) in another tab since this page was shown.
        return changed_since(request, "portal/subscription.html", subscription_context(sub))
    if not can_keep(sub, day):
        messages.info(request, _("This subscription has ended: subscribe again to get it back."))
        return redirect("subscription", sub_id=sub_id)
    try:
        lifecycle_actions.keep(sub, today=day, actor=actor(request))
    except access.ConditionFailed:
        fresh = subscription_or_404(account_id, sub_id)
        return changed_since(request, "portal/subscription.html", subscription_context(fresh))
    messages.success(request, _("Your subscription continues. The next payment is %(amount)s on %(date)s.")
                     % _next_payment(sub))
    return redirect("subscription", sub_id=sub_id)


@require_http_methods(["GET", "POST"])
@customer_required
def pause(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    try:
        next_payment = check_pausable(sub, day)
    except PauseRefused as refused:
        messages.info(request, str(refused))
        return redirect("subscription", sub_id=sub_id)
    form = PauseForm(bound_data(request), initial={"version": sub.Version,
                                                   "until": next_payment + timedelta(days=31)})
    if request.method == "POST" and form.is_valid():
        if _changed(sub, form.cleaned_data.get("version")):
            again = request.POST.copy()
            again["version"] = str(sub.Version)  # the choice kept, drawn again from it as it is now
            return changed_since(request, "portal/pause.html", {
                "sub": sub, "form": PauseForm(again), "next_payment": next_payment,
                "paid_through": sub.PaidThroughDate})
        try:
            resume = pause_end(sub, day, **form.pause_kwargs())
            lifecycle_actions.pause(sub, resume=resume, today=day, actor=actor(request))
        except PauseRefused as refused:
            form.add_error(None, str(refused))
        except access.ConditionFailed:
            messages.warning(request, STALE_MESSAGE)
            return redirect("subscription", sub_id=sub_id)
        else:
            if resume:
                messages.success(request, _("Paused: nothing is charged until %(date)s, when it resumes.")
                                 % {"date": _fmt(resume)})
            else:
                messages.success(request, _("Paused: nothing is charged until you resume it."))
            return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/pause.html", {"sub": sub, "form": form, "next_payment": next_payment,
                                                 "paid_through": sub.PaidThroughDate})


@require_POST
@customer_required
def resume(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if _changed(sub, _posted_version(request)):
        # Resumed (or otherwise changed) in another tab since this page was shown.
        return changed_since(request, "portal/subscription.html", subscription_context(sub))
    if state_of(sub, today()).kind != "paused":
        messages.info(request, _("This subscription is not paused."))
        return redirect("subscription", sub_id=sub_id)
    try:
        lifecycle_actions.resume(sub, today=today(), actor=actor(request))
    except access.ConditionFailed:
        fresh = subscription_or_404(account_id, sub_id)
        return changed_since(request, "portal/subscription.html", subscription_context(fresh))
    messages.success(request, _("Resumed. The next payment is %(amount)s on %(date)s.") % _next_payment(sub))
    return redirect("subscription", sub_id=sub_id)
