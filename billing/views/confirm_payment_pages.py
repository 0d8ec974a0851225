"""``/subscriptions/<id>/confirm-payment/``: a renewal the bank wants the customer to
confirm (3-D Secure, "action required"). Who may see it: the subscription's customer.

GET shows the amount and the period, and confirms that very charge with Stripe.js
(``confirmCardPayment`` with its client secret, static/js/card-authenticate.js); the form
then posts and the server asks the processor how it ended
(``actions.subscriptions.confirm_renewal``): paid, the receipt is written by the payment
run's own path (one receipt, even if the webhook records it first). On the simulated
gateway the page shows that gateway's own bank question instead (it has no Stripe.js).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing.actions import subscriptions as actions
from billing.customers import customer_required
from billing.models import Subscription, SubscriptionStatus
from billing.operations.outcomes import PaymentStatus
from billing.operations.payments import owed_period
from billing.rules.lifecycle import incomplete_expires, is_expired_incomplete
from billing.views.common import subscription_or_404
from billing.views.subscribe_pages import choices_again, started_page
from core.localformat import local_date
from core.money import format_with_symbol
from core.pages import actor, today
from core.payments.errors import GatewayError
from core.payments.gateway import CardEntry, ChargeResult, cards_entered_in_browser

UNREACHABLE = "Our payment provider could not be reached. Please try again in a minute."


@require_http_methods(["GET", "POST"])
@customer_required
def confirm_payment(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if sub.Status in (SubscriptionStatus.INCOMPLETE, SubscriptionStatus.INCOMPLETE_EXPIRED):
        return _finish_first_payment(request, sub)
    try:
        if request.method == "POST":
            answer = request.POST.get("bank")
            outcome = actions.confirm_renewal(sub, today=today(), actor=actor(request),
                                              bank_answer=None if answer is None else answer == "approve")
            if outcome.status == PaymentStatus.PAID:
                messages.success(request, _("Thank you: your payment of %(amount)s went through.") % {
                    "amount": format_with_symbol(outcome.amount or 0, sub.Currency)})
                return redirect("subscription", sub_id=sub_id)
            if outcome.status == PaymentStatus.DECLINED:
                messages.warning(request, _(
                    "Your bank did not confirm the payment. We will try your card again on %(day)s; to pay "
                    "with another card, replace it now.") % {"day": local_date(outcome.next_payment)})
                return redirect("replace_card", sub_id=sub_id)
            if outcome.status == PaymentStatus.SKIPPED:
                return redirect("subscription", sub_id=sub_id)
            messages.warning(request, _("Your bank has not confirmed the payment yet. Please confirm it below."))
        charge = actions.awaited_charge(sub)
    except GatewayError:
        messages.error(request, _(UNREACHABLE))
        return redirect("subscription", sub_id=sub_id)
    if charge is None or not (charge.needs_authentication or charge.succeeded):
        messages.info(request, _("No payment is waiting for your confirmation."))
        return redirect("subscription", sub_id=sub_id)
    return _confirm_page(request, sub, charge, back_url=reverse("replace_card", args=[sub.sub_id]))


def _finish_first_payment(request: HttpRequest, sub: Subscription) -> HttpResponse:
    """The "Finish payment" link of an incomplete subscription: its first charge, waiting
    for the customer's bank, confirmed here (the same path as the subscribe flow's own
    confirmation step, with what the customer chose read back from the subscription). Past
    its deadline: expired, nothing charged, and the page says so."""
    here = redirect("subscription", sub_id=sub.sub_id)
    if is_expired_incomplete(sub) and request.method != "POST":
        messages.error(request, _("This subscription expired: its first payment was not confirmed with your bank "
                                  "within 23 hours, so it never started and nothing was charged."))
        return here
    charge_id = sub.PaymentDetails.AwaitingCharge or ""
    new = actions.finishing(sub)
    try:
        if request.method == "POST":
            answer = request.POST.get("bank")
            started = actions.confirm_first_payment(sub, charge_id, new, today=today(), actor=actor(request),
                                                    bank_answer=None if answer is None else answer == "approve")
            if not started.awaits_authentication:
                return started_page(request, started, new.product_name, sub.Currency, new.card)
            messages.warning(request, _("Your bank has not confirmed the payment yet. Please confirm it below."))
        charge = actions.awaited_charge(sub)
    except GatewayError:
        messages.error(request, _(UNREACHABLE))
        return here
    if charge is None:
        return here
    return _confirm_page(request, sub, charge, back_url=choices_again(sub), first=True,
                         expires=incomplete_expires(sub))


def _confirm_page(request: HttpRequest, sub: Subscription, charge: ChargeResult, *, back_url: str,
                  **more: Any) -> HttpResponse:
    """The bank's confirmation step of a charge waiting for it (a renewal's or the first)."""
    start, end = owed_period(sub)
    browser = cards_entered_in_browser()
    # Confirmed with the bank but not recorded yet (the customer closed the bank's page
    # before coming back): the page's button posts, and the same path records it.
    confirmed = charge.succeeded
    entry = CardEntry(client_secret=charge.client_secret, publishable_key=settings.STRIPE_PUBLISHABLE_KEY,
                      js_url=settings.STRIPE_JS_URL) if browser and not confirmed else None
    return render(request, "portal/confirm_payment.html", {
        "sub": sub, "entry": entry, "payment_method": charge.payment_method,
        "amount": format_with_symbol(charge.amount, charge.currency), "period_start": start, "period_end": end,
        "card": sub.PaymentDetails, "confirmed": confirmed, "simulated_bank": not browser and not confirmed,
        "back_url": back_url, **more,
    })
