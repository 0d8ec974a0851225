"""Staff switch a customer's subscription to another product (rules:
billing/rules/switch.py). Who may: the ``billing.manage_money`` permission (role
``finance``), since an upgrade charges the customer's card at once (off-session: should
the bank want the customer to confirm it, the charge is cancelled and staff are told to
let the customer switch from the portal). Two steps: choose, then confirm the amounts
shown; each switch leaves its audit event (``staff.switch_product``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing.actions import switch as actions
from billing.models import AuditAction, Subscription
from billing.rules.cadence_words import amount_per_period
from billing.rules.schedule import cadence_of
from billing.rules.switch import SwitchQuote, SwitchRefused
from billing.staff.common import PaidChangeWords, account_url, attempt_paid_change, confirm_page
from billing.staff.forms import StaffSwitchForm
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from billing.views.switch_pages import charge_after_switch, product_choices, seat_words
from core.money import format_with_code
from core.pages import actor, today

_NOT_MADE = PaidChangeWords(
    declined=gettext_lazy("The card was declined (%(reason)s): nothing was switched."),
    changed=gettext_lazy("The subscription changed meanwhile: nothing was switched (any amount taken is refunded)."),
    unreachable=gettext_lazy("The payment provider could not be reached: nothing was switched."))


def _question(sub: Subscription, quote: SwitchQuote) -> str:
    """The confirm step's question, with the first payment after the switch as the run will
    take it (the new price, less the coupon's discount for that payment)."""
    after = charge_after_switch(sub, quote)
    question = _switch_terms(quote, sub.Currency, actions.charged_now(sub, quote), _price_words(sub, quote),
                             refund=actions.refunded_now(sub, quote))
    seats = seat_words(quote, format_with_code(quote.unit_amount or 0, sub.Currency))
    if seats:  # the seats are kept: the new price is for them
        question += " " + _("The seats are kept: %(seats)s.") % {"seats": seats}
    if after is None:
        return question
    return question + " " + _("The next payment, on %(date)s, is %(amount)s.") % {
        "date": staff_date(after.date.isoformat()), "amount": format_with_code(after.amount, sub.Currency)}


def _switch_terms(quote: SwitchQuote, currency: str, due_now: int, words: str = "", refund: int = 0) -> str:
    """``words``: the new price in words ("USD 120.00 a year") when its cadence is not monthly;
    ``due_now`` and ``refund``: ``actions.charged_now`` and ``actions.refunded_now``, tax
    included as charged or refunded."""
    if quote.trial_end and quote.upgrade and not quote.charge:
        return _("Switch to %(product)s from today? The free trial runs until %(date)s whatever the product: nothing "
                 "is charged now.") % {"product": quote.new_name, "date": staff_date(quote.trial_end.isoformat())}
    if not quote.upgrade:
        if words:
            return _("Switch to %(product)s from the next payment (%(date)s), at %(price)s? Nothing is charged or "
                     "refunded now.") % {"product": quote.new_name, "date": staff_date(quote.effective.isoformat()),
                                         "price": words}
        return _("Switch to %(product)s from the next payment (%(date)s), at %(price)s a month? Nothing is charged "
                 "or refunded now.") % {"product": quote.new_name, "date": staff_date(quote.effective.isoformat()),
                                        "price": format_with_code(quote.new_price, currency)}
    if quote.restarts and quote.new_period_end is not None:
        terms = {"product": quote.new_name, "price": words, "date": staff_date(quote.new_period_end.isoformat()),
                 "charge": format_with_code(quote.charge, currency), "credit": format_with_code(quote.credit, currency),
                 "due": format_with_code(due_now, currency), "refund": format_with_code(refund, currency)}
        if quote.refund_now:
            return _("Switch to %(product)s, at %(price)s, from today? Its first period, to %(date)s, costs %(charge)s, "
                     "less %(credit)s for the unused days already paid: %(refund)s is refunded to the customer's "
                     "card now.") % terms
        return _("Switch to %(product)s, at %(price)s, from today? Its first period, to %(date)s, costs %(charge)s, "
                 "less %(credit)s for the unused days already paid: %(due)s is charged to the customer's card "
                 "now.") % terms
    if quote.refund_now:
        return _("Switch to %(product)s from today? The days already paid cost %(charge)s at the new price, less than "
                 "the %(credit)s paid for them: %(refund)s is refunded to the customer's card now.") % {
            "product": quote.new_name, "charge": format_with_code(quote.charge, currency),
            "credit": format_with_code(quote.credit, currency), "refund": format_with_code(refund, currency)}
    return _("Switch to %(product)s from today? The days already paid cost %(charge)s at the new price, less "
             "%(credit)s paid for them: %(due)s is charged to the customer's card now.") % {
        "product": quote.new_name, "charge": format_with_code(quote.charge, currency),
        "credit": format_with_code(quote.credit, currency), "due": format_with_code(due_now, currency)}


def _price_words(sub: Subscription, quote: SwitchQuote) -> str:
    """The new price in words when its cadence is not monthly (else empty: the words "a
    month" are in the question)."""
    cadence = quote.new_cadence or cadence_of(sub)
    if cadence.is_monthly:
        return ""
    return amount_per_period(format_with_code(quote.new_price, sub.Currency), cadence)


@require_http_methods(["GET", "POST"])
def staff_switch(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    back = redirect(account_url(account_id))
    choices = product_choices(sub)
    if not choices:  # said, rather than an empty list to choose from
        return confirm_page(request, account_id, _("Switch product"),
                            _("There is no other live product in %(currency)s to switch this subscription to.")
                            % {"currency": sub.Currency}, sub=sub, can_confirm=False)
    if sub.LastSwitchDate == today().isoformat():
        return confirm_page(request, account_id, _("Switch product"),
                            _("This subscription has switched product today already: it can switch again tomorrow."),
                            sub=sub, can_confirm=False)
    form = StaffSwitchForm(request.POST or None, choices=choices)
    if request.method != "POST" or not form.is_valid():
        return confirm_page(request, account_id, _("Switch product"),
                            _("Switch this subscription to another price of its currency (of its product or of "
                              "another)? The next step shows the amounts."), sub=sub, form=form,
                            button=_("See the amounts"))
    data = form.cleaned_data

    def step() -> HttpResponse | actions.Switched:
        if data["step"] != "confirm":
            quote = actions.quote(sub, data["sku"], today=today())
            confirm = StaffSwitchForm(initial={"sku": quote.choice, "step": "confirm", "upgrade": "1" if quote.upgrade
                                               else "0", "charge": quote.charge, "credit": quote.credit},
                                      choices=[(quote.choice, quote.new_name)])
            return confirm_page(request, account_id, _("Switch product"), _question(sub, quote), sub=sub,
                                form=confirm, button=_("Switch"))
        expected = SwitchQuote(old_sku=sub.SKU, new_sku=data["sku"], new_name="", old_price=0, new_price=0,
                               upgrade=data["upgrade"] == "1", effective=today(), paid_through=None,
                               charge=data["charge"] or 0, credit=data["credit"] or 0)
        return actions.switch(sub, data["sku"], today=today(), actor=actor(request), expected=expected,
                              action=AuditAction.STAFF_SWITCH, on_session=False)

    done = attempt_paid_change(request, step, refused=SwitchRefused, declined=actions.SwitchDeclined,
                               words=_NOT_MADE)
    if done is None:
        return back
    if isinstance(done, HttpResponse):
        return done
    if done.client_secret:  # off-session, the bank wants the customer: not for staff to do
        actions.abandon(done, today=today())
        messages.error(request, _("The customer's bank asks them to confirm this payment: nothing was switched. "
                                  "The customer can switch from their portal."))
        return back
    messages.success(request, _("Switched to %(product)s; %(charged)s charged now.") % {
        "product": done.sub.ProductName, "charged": format_with_code(done.charged, sub.Currency)})
    return back
