"""Staff add an add-on to a live subscription, or remove one (the money role's, as a change
of seats: it changes what the customer's card is charged). Either is from the next payment
(billing/rules/add_ons.py): nothing is charged or refunded now. Each change leaves its
audit event, staff's name its actor."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing.actions import add_ons as actions
from billing.models import Subscription
from billing.rules.add_ons import AddOnRefused, AddOnsChange, current_add_ons
from billing.rules.cadence_words import amount_per_period
from billing.rules.schedule import cadence_of
from billing.staff.common import back_to_account, change_page
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from core.money import format_with_code
from core.pages import actor, today


class AddOnForm(forms.Form):
    price = forms.ChoiceField(label=gettext_lazy("Add-on"))

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["price"].choices = choices


def _price(sub: Subscription, amount: int) -> str:
    return amount_per_period(format_with_code(amount, sub.Currency), cadence_of(sub))


def _page(request: HttpRequest, account_id: str, sub: Subscription, *, choices: list[tuple[str, str]], title: str,
          question: str, write: str) -> HttpResponse:
    form = AddOnForm(request.POST or None, choices=choices)

    def change() -> str | None:
        chosen = form.cleaned_data["price"]
        apply = actions.add if write == "add" else actions.remove
        try:
            done: AddOnsChange = apply(sub, chosen, today=today(), actor=actor(request))
        except AddOnRefused as refused:
            form.add_error("price", str(refused))
            return None
        terms = {"name": done.name, "date": staff_date(done.effective.isoformat()),
                 "amount": format_with_code(done.new_price, sub.Currency)}
        if done.added:
            return _("%(name)s is added from the next payment, on %(date)s: %(amount)s a period from then.") % terms
        return _("%(name)s is removed from the next payment, on %(date)s: %(amount)s a period from then.") % terms

    return change_page(request, account_id, sub, title=title, question=question, button=title, form=form,
                       change=change, drawn_again=lambda: AddOnForm(choices=choices))


@require_http_methods(["GET", "POST"])
def staff_add_on(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    offered = actions.offers(sub, today()) if sub.NextPaymentDate else []
    if not offered:
        return back_to_account(request, account_id, _("No add-on can be added to this subscription now."))
    terms = {"date": staff_date(sub.NextPaymentDate), "amount": format_with_code(int(sub.PaymentAmount), sub.Currency)}
    return _page(request, account_id, sub, title=_("Add an add-on"), write="add",
                 choices=[(o.price_id, f"{o.name}: {_price(sub, o.amount)}") for o in offered],
                 question=_("Add an add-on to this subscription from its next payment, on %(date)s? Nothing is "
                            "charged now; that payment, %(amount)s now, includes the add-on's price, on a line of "
                            "its own.") % terms)


@require_http_methods(["GET", "POST"])
def staff_remove_add_on(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    held = [a for a in current_add_ons(sub, today()) if a.last_day is None]
    if not held or not sub.NextPaymentDate:
        return back_to_account(request, account_id, _("This subscription has no add-on to remove."))
    return _page(request, account_id, sub, title=_("Remove an add-on"), write="remove",
                 choices=[(a.price_id, f"{a.name}: {_price(sub, a.amount)}") for a in held],
                 question=_("Remove an add-on from this subscription's next payment, on %(date)s? The customer keeps "
                            "it until then, paid for; nothing is refunded.") % {
                     "date": staff_date(sub.NextPaymentDate)})
