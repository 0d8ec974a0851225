"""Staff add a metered price to a live subscription, or remove one (the money role's, as a
switch). Added: from its next payment on, each payment also bills that meter's usage of the
period just ended, on the same invoice (docs/USAGE.md "Several metered prices"). Removed: at
the period's end, its usage through the last day paid for billed by the next payment
(docs/USAGE.md "Removing a metered price"). Nothing is charged now either way."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing.access.usage_billing import NotMetered
from billing.actions import meters as meter_actions
from billing.models import Subscription
from billing.rules.metered_items import last_day_billed
from billing.rules.price_objects import price_words_of
from billing.staff.common import back_to_account, change_page
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from core.pages import actor


class MeteredPriceForm(forms.Form):
    price = forms.ChoiceField(label=gettext_lazy("Metered price"))

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["price"].choices = choices


def _written(form: forms.Form, write: Callable[[], Subscription]) -> Subscription | None:
    """The subscription as ``write`` leaves it; None, with the refusal on the form's
    ``price``, when it cannot be."""
    try:
        return write()
    except NotMetered as refused:
        form.add_error("price", str(refused))
        return None


@require_http_methods(["GET", "POST"])
def staff_add_metered(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    offered = meter_actions.addable_metered_prices(sub)
    if not offered:
        return back_to_account(request, account_id, _("No metered price can be added to this subscription."))
    choices = [(price.PriceId, f"{product}: {price.Meter}, {price_words_of(price)}")
               for product, price in offered]
    form = MeteredPriceForm(request.POST or None, choices=choices)

    def add() -> str | None:
        chosen = form.cleaned_data["price"]
        kept = chosen in sub.metered_ends
        if _written(form, lambda: meter_actions.attach_metered_price(sub, chosen, actor=actor(request))) is None:
            return None
        if kept:
            return _("%(product)s keeps billing this usage.") % {"product": sub.ProductName or sub.SKU}
        return _("%(product)s now bills this usage too, from its next payment on.") % {
            "product": sub.ProductName or sub.SKU}

    return change_page(request, account_id, sub, title=_("Add a metered price"),
                       question=_("Bill this subscription for the usage of another meter too? Nothing is charged "
                                  "now: each payment from the next on adds the usage of the period just ended, on "
                                  "the same invoice."),
                       button=_("Add a metered price"), form=form, change=add,
                       drawn_again=lambda: MeteredPriceForm(choices=choices))


class WhenForm(MeteredPriceForm):
    """A metered price and when the change takes effect: at the period's end or now."""

    when = forms.ChoiceField(label=gettext_lazy("Billed through"), widget=forms.RadioSelect)

    def __init__(self, *args, choices: list[tuple[str, str]], when: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, choices=choices, **kwargs)
        self.fields["when"].choices = when
        self.fields["when"].initial = "period_end"


def _removal_when(last_day: str) -> list[tuple[str, str]]:
    return [("period_end", _("The last day paid for, %(day)s") % {"day": last_day}),
            ("now", _("Today: the usage of later days is not billed"))]


def _change_when(last_day: str) -> list[tuple[str, str]]:
    return [("period_end", _("The last day paid for, %(day)s") % {"day": last_day}),
            ("now", _("Today: the new price bills from tomorrow"))]


def _when_page(request: HttpRequest, account_id: str, sub: Subscription, *, choices: list[tuple[str, str]],
               when: list[tuple[str, str]], title: str, question: str,
               write: Callable[[str, bool], Subscription], done: Callable[[Subscription, str], str]) -> HttpResponse:
    """A change of a metered price that takes effect at the period's end or now: its
    confirm page, ``write(choice, now)`` on a valid POST, ``done`` what staff are told."""
    form = WhenForm(request.POST or None, choices=choices, when=when)

    def change() -> str | None:
        chosen = form.cleaned_data["price"]
        after = _written(form, lambda: write(chosen, form.cleaned_data["when"] == "now"))
        return None if after is None else done(after, chosen)

    return change_page(request, account_id, sub, title=title, question=question, button=title, form=form,
                       change=change, drawn_again=lambda: WhenForm(choices=choices, when=when))


@require_http_methods(["GET", "POST"])
def staff_remove_metered(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    offered, last_day = meter_actions.removable_metered_prices(sub), last_day_billed(sub)
    if not offered or last_day is None:
        return back_to_account(request, account_id, _("No metered price can be removed from this subscription."))
    return _when_page(
        request, account_id, sub, choices=[(p.PriceId, f"{p.Meter}, {price_words_of(p)}") for p in offered],
        when=_removal_when(staff_date(last_day)), title=_("Remove a metered price"),
        question=_("Stop billing this subscription for a meter's usage? Its usage through the day chosen is billed "
                   "by the next payment, with the rest; none after it. Until then it can be added again."),
        write=lambda price_id, now: meter_actions.remove_metered_price(sub, price_id, actor=actor(request), now=now),
        done=lambda after, price_id: _("%(product)s stops billing this usage after %(day)s: the next payment bills "
                                       "it through that day.") % {
            "product": sub.ProductName or sub.SKU, "day": staff_date(after.metered_ends[price_id])})


@require_http_methods(["GET", "POST"])
def staff_change_metered(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """A metered price replaced by another of its meter at the period's end, or from
    tomorrow (docs/USAGE.md "Changing a metered price"): offered, each of the
    subscription's own with each active price of the same meter, currency and cadence."""
    sub = subscription_or_404(account_id, sub_id)
    offered, last_day = meter_actions.replacements(sub), last_day_billed(sub)
    if not offered or last_day is None:
        return back_to_account(request, account_id, _("No metered price of this subscription can be changed."))
    return _when_page(
        request, account_id, sub, when=_change_when(staff_date(last_day)), title=_("Change a metered price"),
        choices=[(f"{old.PriceId} {new.PriceId}", f"{old.Meter}: {price_words_of(old)} → {price_words_of(new)}")
                 for old, new in offered],
        question=_("Bill a meter's usage at another price from the day after the day chosen? The next payment "
                   "bills it at the price it has now up to then. Nothing is charged now."),
        write=lambda pair, now: meter_actions.replace_metered_price(sub, *pair.split(" ", 1), actor=actor(request),
                                                                    now=now),
        done=lambda after, pair: _("From %(day)s, %(product)s bills this usage at the new price; the next payment "
                                   "bills it at the old one up to then.") % {
            "product": sub.ProductName or sub.SKU, "day": staff_date(after.metered_starts[pair.split(" ", 1)[1]])})
