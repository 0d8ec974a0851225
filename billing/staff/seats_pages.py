"""Staff change a customer's seats (rules: billing/rules/seats.py). Who may: the
``billing.manage_money`` permission (role ``finance``), since more seats charge the
customer's card at once (off-session) and fewer seats refund to it. Two steps: the
number, then the amount to confirm (the customer's page's function, ``charged_now``);
each change leaves its audit event (``staff.change_quantity``)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing.actions import seats as actions
from billing.forms import SeatsFields
from billing.models import AuditAction, Subscription
from billing.rules.seats import SeatsQuote, SeatsRefused, quantity_of, unit_amount_of
from billing.staff.common import PaidChangeWords, account_url, attempt_paid_change, confirm_page
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from core.money import format_with_code
from core.pages import actor, today


class StaffSeatsForm(SeatsFields):
    """The number of seats; once the amount was shown, it and the version travel back
    hidden, so the change charges or credits only what was confirmed."""

    already_held = gettext_lazy("The subscription has %(n)s seats already.")
    step = forms.CharField(widget=forms.HiddenInput, required=False)
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    amount = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: object, sub: Subscription, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.sub = sub
        self.priced = actions.seat_price(sub)  # the catalog read once per form
        self.bounds = self.priced.bounds


_NOT_MADE = PaidChangeWords(
    declined=gettext_lazy("The card was declined (%(reason)s): the seats are unchanged."),
    changed=gettext_lazy("The subscription changed meanwhile: nothing was changed (any amount taken is refunded)."),
    unreachable=gettext_lazy("The payment provider could not be reached: nothing was changed."))


def _question(sub: Subscription, quote: SeatsQuote) -> str:
    currency = sub.Currency
    if quote.unit_amount is None:
        return _tiers_question(sub, quote)
    terms = {"old": quote.old_quantity, "new": quote.new_quantity,
             "unit": format_with_code(quote.unit_amount, currency)}
    if quote.more and quote.due_now:
        return _("From %(old)s to %(new)s seats at %(unit)s a seat? The added seats for the days already paid, to "
                 "%(end)s: %(due)s is charged to the customer's card now.") % {
            **terms, "end": staff_date(quote.paid_through.isoformat() if quote.paid_through else ""),
            "due": format_with_code(actions.charged_now(sub, quote), currency)}
    if quote.credit_now:
        return _("From %(old)s to %(new)s seats at %(unit)s a seat? The removed seats for the days already paid, to "
                 "%(end)s: %(credit)s is refunded to the customer's card now.") % {
            **terms, "end": staff_date(quote.paid_through.isoformat() if quote.paid_through else ""),
            "credit": format_with_code(actions.credited_now(sub, quote), currency)}
    return _("From %(old)s to %(new)s seats at %(unit)s a seat? Nothing is charged or refunded now.") % terms


def _tiers_question(sub: Subscription, quote: SeatsQuote) -> str:
    """The question for a price by tiers of seats: the two whole prices, and the
    difference for the days already paid, charged or refunded."""
    currency = sub.Currency
    terms = {"old": quote.old_quantity, "new": quote.new_quantity,
             "old_price": format_with_code(quote.old_price, currency),
             "new_price": format_with_code(quote.new_price, currency),
             "end": staff_date(quote.paid_through.isoformat() if quote.paid_through else "")}
    if quote.due_now:
        return _("From %(old)s to %(new)s seats, %(old_price)s to %(new_price)s a period by the price's tiers? For "
                 "the days already paid, to %(end)s: %(due)s is charged to the customer's card now.") % {
            **terms, "due": format_with_code(actions.charged_now(sub, quote), currency)}
    if quote.credit_now:
        return _("From %(old)s to %(new)s seats, %(old_price)s to %(new_price)s a period by the price's tiers? For "
                 "the days already paid, to %(end)s: %(credit)s is refunded to the customer's card now.") % {
            **terms, "credit": format_with_code(actions.credited_now(sub, quote), currency)}
    return _("From %(old)s to %(new)s seats, %(old_price)s to %(new_price)s a period by the price's tiers? Nothing "
             "is charged or refunded now.") % terms


def _now(sub: Subscription, form: StaffSeatsForm) -> str:
    """The seats now, and the question of the first step."""
    if form.priced.terms is not None:
        return _("%(n)s seats, priced by tiers: %(tiers)s. How many seats from today? The next step shows the "
                 "amount.") % {"n": quantity_of(sub), "tiers": form.priced.words()}
    return _("%(unit)s a seat × %(n)s. How many seats from today? The next step shows the amount.") % {
        "unit": format_with_code(unit_amount_of(sub), sub.Currency), "n": quantity_of(sub)}


@require_http_methods(["GET", "POST"])
def staff_seats(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    back = redirect(account_url(account_id))
    title = _("Change the number of seats")
    form = StaffSeatsForm(request.POST or None, sub=sub, initial={"quantity": quantity_of(sub)})
    if request.method != "POST" or not form.is_valid():
        return confirm_page(request, account_id, title, _now(sub, form), sub=sub, form=form,
                            button=_("See the amount"))
    data = form.cleaned_data

    def step() -> HttpResponse | actions.SeatsChange:
        if data["step"] != "confirm":
            quote = actions.quote(sub, data["quantity"], today=today(), priced=form.priced)
            shown = actions.shown_now(sub, quote)
            confirm = StaffSeatsForm(initial={"quantity": quote.new_quantity, "step": "confirm",
                                              "version": sub.Version, "amount": shown}, sub=sub)
            confirm.fields["quantity"].widget = forms.HiddenInput()
            return confirm_page(request, account_id, title, _question(sub, quote), sub=sub, form=confirm,
                                button=_("Change the seats"))
        return actions.change_quantity(sub, data["quantity"], actor(request), today=today(),
                                       expected_version=data["version"], expected_amount=data["amount"],
                                       action=AuditAction.STAFF_QUANTITY)

    # Refused: stale amounts or version included (SeatsChanged).
    done = attempt_paid_change(request, step, refused=SeatsRefused, declined=actions.SeatsDeclined, words=_NOT_MADE)
    if done is None:
        return back
    if isinstance(done, HttpResponse):
        return done
    messages.success(request, _("%(n)s seats from today; %(charged)s charged, %(credited)s refunded now.") % {
        "n": done.quote.new_quantity, "charged": format_with_code(done.charged, sub.Currency),
        "credited": format_with_code(done.credited, sub.Currency)})
    return back
