"""Ending and pausing a subscription from the portal: cancel (at period end, the
default, or now), keep, pause, resume. Each change is made by
``billing.actions.lifecycle`` (audit event, refund and e-mail included); a stale form or
a concurrent change gets the kind message of the other manage pages.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from billing import access, batches
from billing.actions import lifecycle as lifecycle_actions
from billing.customers import customer_required
from billing.exceptions import PauseRefused
from billing.forms import CancelChoiceForm, PauseForm
from billing.models import Subscription
from billing.rules.lifecycle import CancelMode, can_keep, check_pausable, pause_end, state_of
from billing.views.common import STALE_MESSAGE, subscription_or_404
from core.localformat import local_date
from core.money import format_with_symbol
from core.pages import actor, bound_data, today


def _fmt(day: date) -> str:
    return local_date(day, "j F Y")  # in the page's language ("14 febbraio 2027")


def _stale(request: HttpRequest, sub: Subscription, version: int | None) -> bool:
    """The form was read before another change (another tab): say so."""
    if version is not None and version != sub.Version:
        messages.warning(request, STALE_MESSAGE)
        return True
    return False


def cancel_choices(sub: Subscription, day: date) -> tuple[str | None, str]:
    """The labels of the two ways to end (None for "at period end" when nothing is paid
    after today: then it is the same as now)."""
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    if paid_through and paid_through > day and state_of(sub, day).running:
        return (
            _("At the end of the period you paid for: it runs until %(date)s, and you can keep it until "
              "then. Nothing more is charged.") % {"date": _fmt(paid_through)},
            _("Now: it ends today, and the days you paid for after today are refunded, their share "
              "of what you paid."),
        )
    return None, _("Now: it ends today. Nothing more is charged.")


def _next_payment(sub) -> dict[str, str]:
    """The amount and date of the payment the schedule now expects (after keep or resume),
    as the batch will charge it, for the page's message."""
    return {"amount": format_with_symbol(batches.owed_amount(sub), sub.Currency),
            "date": _fmt(date.fromisoformat(sub.NextPaymentDate))}


@require_http_methods(["GET", "POST"])
@customer_required
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    if not sub.is_live:
        return redirect("subscription" if can_keep(sub, day) else "cancelled", sub_id=sub_id)
    period_end_label, now_label = cancel_choices(sub, day)
    form = CancelChoiceForm(bound_data(request), initial={"version": sub.Version},
                            period_end_label=period_end_label, now_label=now_label)
    if request.method == "POST" and form.is_valid():
        if _stale(request, sub, form.cleaned_data.get("version")):
            return redirect("cancel", sub_id=sub_id)
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
            messages.success(request, _("Your %(product)s subscription is cancelled: it runs until %(date)s and "
                                        "nothing more is charged. You can keep it until then.")
                             % {"product": name, "date": _fmt(date.fromisoformat(sub.PaidThroughDate))})
            return redirect("subscription", sub_id=sub_id)
        messages.success(request, _("Your %(product)s subscription has ended.") % {"product": name})
        if done.refunded:
            messages.success(request, _("%(amount)s for the days after today is refunded to your card.")
                             % {"amount": format_with_symbol(done.refunded, sub.Currency)})
        if done.refund_failures:
            messages.warning(request, _("The refund of the days after today could not be made just now: our "
                                        "staff will make it and e-mail you."))
        return redirect("cancelled", sub_id=sub_id)
    return render(request, "portal/cancel.html", {"sub": sub, "form": form})


@require_POST
@customer_required
def keep(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    if not can_keep(sub, day):
        messages.info(request, _("This subscription has ended: subscribe again to get it back."))
        return redirect("subscription", sub_id=sub_id)
    try:
        lifecycle_actions.keep(sub, today=day, actor=actor(request))
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect("subscription", sub_id=sub_id)
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
        if _stale(request, sub, form.cleaned_data.get("version")):
            return redirect("pause", sub_id=sub_id)
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
    if state_of(sub, today()).kind != "paused":
        messages.info(request, _("This subscription is not paused."))
        return redirect("subscription", sub_id=sub_id)
    try:
        lifecycle_actions.resume(sub, today=today(), actor=actor(request))
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect("subscription", sub_id=sub_id)
    messages.success(request, _("Resumed. The next payment is %(amount)s on %(date)s.") % _next_payment(sub))
    return redirect("subscription", sub_id=sub_id)
