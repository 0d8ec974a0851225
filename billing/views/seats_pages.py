"""``/subscriptions/<id>/seats/``: change the number of seats (docs/PORTAL.md, "Seats").
Who may see it: the subscription's customer. Staff change seats from the customer's
billing page (billing/staff/seats_pages.py).

Two steps, as the switch of product: the number of seats (a field error when it is out of
the price's bounds or unchanged), then the amounts to confirm: what more seats charge now
or fewer seats credit now, from ``actions.charged_now`` and the quote ``change_quantity``
then charges (one function: the page shows what is charged). The confirm posts the
version and the amount it showed; a change meanwhile shows the new amounts (409) and
charges nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import seats as actions
from billing.customers import customer_required
from billing.forms import SeatsFields, VersionedForm
from billing.models import Subscription
from billing.rules.projection import coming_charges
from billing.rules.seats import SeatsQuote, SeatsRefused, quantity_of, unit_amount_of
from billing.views.common import changed_since, live_subscription, subscription_or_404
from core.money import format_with_symbol
from core.pages import actor, today
from core.payments.errors import GatewayError

UNREACHABLE = gettext_lazy("Our payment provider could not be reached: nothing was charged or changed. Please try "
                           "again in a minute.")


class SeatsForm(SeatsFields, VersionedForm):
    """How many seats: a whole number within the subscription's price's bounds, not the
    number it has (rendered by crispy-forms, its errors under the field)."""

    def __init__(self, *args: Any, sub: Subscription, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sub = sub
        self.priced = actions.seat_price(sub)  # the catalog read once per form
        self.bounds = low, high = self.priced.bounds
        field = self.fields["quantity"]
        field.min_value, field.max_value = low, high
        field.widget.attrs.update({"min": low, "max": high})
        if self.priced.terms is not None:
            field.help_text = gettext_lazy("From %(low)s to %(high)s seats, priced by tiers.") % {
                "low": low, "high": high}
        else:
            field.help_text = gettext_lazy("From %(low)s to %(high)s seats, at %(unit)s a seat.") % {
                "low": low, "high": high, "unit": format_with_symbol(unit_amount_of(sub), sub.Currency)}


def page_context(sub: Subscription, form: SeatsForm, quantity: int) -> dict[str, Any]:
    """What both steps show of the seats now: a price a seat, or the price's tiers."""
    return {"sub": sub, "form": form, "quantity": quantity, "tiers": form.priced.words(),
            "unit_price": "" if form.priced.terms is not None else format_with_symbol(unit_amount_of(sub),
                                                                                      sub.Currency)}


def quote_context(sub: Subscription, quote: SeatsQuote) -> dict[str, Any]:
    """What the confirm page shows: the amount now (charged, tax included as charged, or
    credited), and the next payment at the new whole price."""
    money = sub.Currency
    due_now = actions.charged_now(sub, quote)
    credit = actions.credited_now(sub, quote)
    after = coming_charges(sub, 1, price=quote.new_price, tax=access.tax_terms(sub))
    return {
        "quote": quote, "due_now": due_now, "due_now_text": format_with_symbol(due_now, money),
        "credit_now_text": format_with_symbol(credit, money),
        "amount_shown": due_now if quote.due_now else credit,
        "new_price": format_with_symbol(quote.new_price, money),
        "next_charge": after[0] if after else None,
        "next_amount": format_with_symbol(after[0].amount, money) if after else "",
    }


@require_http_methods(["GET", "POST"])
@customer_required
@live_subscription(gettext_lazy("This subscription is cancelled: there is nothing to change."))
def change_seats(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    form = SeatsForm(request.POST if request.method == "POST" else None, sub=sub,
                     initial={"version": sub.Version, "quantity": quantity_of(sub)})
    context = page_context(sub, form, quantity_of(sub))
    if request.method != "POST" or not form.is_valid():
        return render(request, "portal/seats.html", context)
    quantity, version = form.cleaned_data["quantity"], form.cleaned_data.get("version")
    try:
        if request.POST.get("step") != "confirm":
            if version is not None and version != sub.Version:
                raise actions.SeatsChanged(_("The subscription changed since you looked."))
            quote = actions.quote(sub, quantity, today=today(), priced=form.priced)
            return render(request, "portal/seats_confirm.html", {**context, **quote_context(sub, quote)})
        done = actions.change_quantity(sub, quantity, actor(request), today=today(), expected_version=version,
                                       expected_amount=_number(request.POST.get("amount")))
    except actions.SeatsChanged:
        return _again(request, account_id, sub.sub_id, quantity)
    except access.ConditionFailed:
        messages.warning(request, _("The subscription changed meanwhile: nothing was changed, and any amount taken "
                                    "is refunded. Please try again."))
        return redirect("change_seats", sub_id=sub.sub_id)
    except SeatsRefused as refused:
        messages.warning(request, str(refused))
        return redirect("change_seats", sub_id=sub.sub_id)
    except actions.SeatsDeclined as declined:
        messages.error(request, _("Your card was declined (%(reason)s): the seats are unchanged.") % {
            "reason": declined})
        return redirect("change_seats", sub_id=sub.sub_id)
    except GatewayError:
        messages.error(request, str(UNREACHABLE))
        return redirect("change_seats", sub_id=sub.sub_id)
    _said(request, done)
    return redirect("subscription", sub_id=sub.sub_id)


def _number(text: str | None) -> int:
    try:
        return int(text or "")
    except ValueError:
        return -1  # no amount shown: never equal to one


def _again(request: HttpRequest, account_id: str, sub_id: str, quantity: int) -> HttpResponse:
    """The confirm page again, from the subscription as it is now (409): nothing was done."""
    sub = subscription_or_404(account_id, sub_id)
    form = SeatsForm({"quantity": quantity, "version": sub.Version}, sub=sub)
    context = page_context(sub, form, quantity_of(sub))
    if not form.is_valid():
        return changed_since(request, "portal/seats.html", context)
    try:
        quote = actions.quote(sub, quantity, today=today(), priced=form.priced)
    except SeatsRefused:
        return changed_since(request, "portal/seats.html", context)
    return changed_since(request, "portal/seats_confirm.html", {**context, **quote_context(sub, quote)})


def _said(request: HttpRequest, done: actions.SeatsChange) -> None:
    money = done.sub.Currency
    seats = _("You now have %(n)s seats.") % {"n": done.quote.new_quantity}
    if done.charged:
        messages.success(request, seats + " " + _("%(amount)s was charged for the days already paid (receipt "
                                                  "%(receipt)s).") % {
            "amount": format_with_symbol(done.charged, money), "receipt": done.receipt_id})
    elif done.credited:
        messages.success(request, seats + " " + _("%(amount)s was refunded to your card for the days already "
                                                  "paid.") % {"amount": format_with_symbol(done.credited, money)})
    else:
        messages.success(request, seats)
