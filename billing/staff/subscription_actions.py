"""Staff actions on one subscription: cancel, change the payment day, retry a past-due
payment now (billing/actions/retry.py: the batch's own code path). Each action leaves
its audit event.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import retry
from billing.actions import subscriptions as actions
from billing.models import AuditAction, SubscriptionStatus
from billing.rules.cadence_words import NO_PAYMENT_DAY
from billing.rules.projection import owed_charge
from billing.rules.schedule import cadence_of
from billing.staff.common import (
    account_url,
    back_to_account,
    change_page,
    changed_since,
    confirm_page,
    drawn_from_older,
)
from billing.staff.forms import PaymentDayForm
from billing.templatetags.staff_pages import staff_date, status_label
from billing.views.common import subscription_or_404
from core.money import format_with_code
from core.pages import actor, today
from core.payments.errors import GatewayError


@require_http_methods(["GET", "POST"])
def staff_cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        return back_to_account(request, account_id, _("This subscription is already cancelled."))

    def cancel() -> str:
        actions.cancel(sub, actor=actor(request), reason="staff", action=AuditAction.STAFF_CANCEL)
        return _("Subscription %(product)s cancelled.") % {"product": sub.ProductName or sub.SKU}

    # A metered price's usage is billed in arrears: its last period's is still charged.
    question = _("Cancel this subscription? No further payments or reminders will be made, but for its usage up "
                 "to its last paid day, charged the day after.") if sub.MeteredPriceId and sub.is_live else \
        _("Cancel this subscription? No further payments or reminders will be made.")
    return change_page(request, account_id, sub, title=_("Cancel subscription"), question=question,
                       button=_("Cancel subscription"), danger=True, change=cancel)


@require_http_methods(["GET", "POST"])
def staff_payment_day(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        return back_to_account(request, account_id, _("A cancelled subscription has no payment day to change."))
    if not sub.NextPaymentDate:  # paused until resumed: nothing scheduled to move
        return back_to_account(request, account_id, _("This subscription is paused: resume it first."))
    if not cadence_of(sub).has_payment_day:
        return back_to_account(request, account_id, NO_PAYMENT_DAY)
    form = PaymentDayForm(request.POST or None, initial={"payment_day": sub.PaymentDay})

    def change_day() -> str:
        actions.change_payment_day(sub, form.cleaned_data["payment_day"], actor=actor(request),
                                   action=AuditAction.STAFF_PAYMENT_DAY)
        return _("Payment day changed to %(day)s; next payment %(date)s.") % {
            "day": sub.PaymentDay, "date": staff_date(sub.NextPaymentDate)}

    return change_page(
        request, account_id, sub, title=_("Change the payment day"),
        question=_("Move this subscription to a new day of the month? The days paid stay paid and no day is "
                   "charged twice: the next payment keeps its date and covers the days up to the new day, "
                   "prorated by day, plus the month after."),
        button=_("Change payment day"), form=form, change=change_day,
        # the day it has now, not the one chosen for the subscription as it was
        drawn_again=lambda: PaymentDayForm(initial={"payment_day": sub.PaymentDay}))


@require_http_methods(["GET", "POST"])
def staff_retry(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if sub.Status != SubscriptionStatus.PAST_DUE:
        return back_to_account(request, account_id, _("Only a past-due subscription can be retried now."))
    def page() -> HttpResponse:
        return confirm_page(request, account_id, _("Retry the payment now"),
                            _("Charge %(amount)s for the period %(period)s now, instead of waiting for the next "
                              "retry?") % {"amount": format_with_code(owed_charge(sub, tax=access.tax_terms(sub)).amount, sub.Currency),
                                           "period": staff_date(sub.BillingPeriod or sub.NextPaymentDate)},
                            sub=sub, button=_("Retry payment now"), danger=True)

    if request.method == "GET":
        return page()
    if drawn_from_older(request, sub):
        return changed_since(request, page)
    try:
        retried = retry.retry_now(sub, run_date=today(), actor=actor(request))
    except GatewayError:
        return back_to_account(request, account_id, _("The payment provider could not be reached; nothing "
                                                      "changed. Try again shortly."))
    status = {"status": status_label(retried.subscription.Status)}
    outcome = {
        "paid": (messages.SUCCESS, _("The payment went through. Status is now %(status)s.") % status),
        "declined": (messages.WARNING, _("The card was declined again; the next retry is scheduled. "
                                         "Status is now %(status)s.") % status),
        "cancelled": (messages.WARNING, _("The card was declined on the last retry; the subscription is "
                                          "cancelled. Status is now %(status)s.") % status),
    }.get(retried.status, (messages.INFO, _("Nothing was charged (%(reason)s). Status is now %(status)s.") % {
        "reason": retried.reason or retried.status, **status}))
    messages.add_message(request, *outcome)
    return redirect(account_url(account_id))
