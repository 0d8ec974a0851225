"""``/subscriptions/<id>/add-ons/``: a subscription's add-ons (docs/PORTAL.md, "Add-ons";
rules: billing/rules/add_ons.py). Who may see it: the subscription's customer. Staff
change add-ons from the customer's billing page (billing/staff/add_on_pages.py).

The page lists the add-ons the subscription has (each with "Remove") and those it may add
(each with "Add"); either button shows the change to confirm: nothing charged now, the
day it applies (the next payment) and that payment as the run will take it
(``actions.add_ons.next_payment_after``, the projection the payment run charges by). The
confirm posts the version it was drawn from and the amount it showed; a change meanwhile
shows the page again as it is now (409) and changes nothing.
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
from billing.actions import add_ons as actions
from billing.customers import customer_required
from billing.models import Subscription
from billing.rules.add_ons import AddOnRefused, AddOnsChange, current_add_ons, removing
from billing.rules.cadence_words import amount_per_period
from billing.rules.schedule import cadence_of
from billing.views.common import changed_since, live_subscription, subscription_or_404
from core.localformat import local_day
from core.money import format_with_symbol
from core.pages import actor, today


def page_context(sub: Subscription) -> dict[str, Any]:
    """The add-ons it has and those it may add, each with its price a period in words."""
    cadence, money = cadence_of(sub), sub.Currency
    day = today()
    return {
        "sub": sub,
        # ``pending``: billed from the next payment, not yet paid for
        "add_ons": [{"add_on": add_on, "price": amount_per_period(format_with_symbol(add_on.amount, money), cadence),
                     "pending": add_on.first_day > day} for add_on in current_add_ons(sub, day)],
        "offers": [{"offer": offer, "price": amount_per_period(format_with_symbol(offer.amount, money), cadence)}
                   for offer in actions.offers(sub, day)],
    }


def confirm_context(sub: Subscription, change: AddOnsChange) -> dict[str, Any]:
    """What the confirm step shows: the change, and the next payment after it."""
    coming = actions.next_payment_after(sub, change)
    return {"sub": sub, "change": change,
            "price": amount_per_period(format_with_symbol(change.amount, sub.Currency), cadence_of(sub)),
            "next_charge": coming, "amount_shown": coming.amount if coming else -1,
            "next_amount": format_with_symbol(coming.amount, sub.Currency) if coming else ""}


def _quote(sub: Subscription, verb: str, price_id: str) -> AddOnsChange:
    if verb == "remove":
        return removing(sub, price_id, today())
    return actions.quote_add(sub, price_id, today=today())[1]


@require_http_methods(["GET", "POST"])
@customer_required
@live_subscription(gettext_lazy("This subscription is cancelled: there is nothing to change."))
def add_ons(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    if request.method != "POST":
        return render(request, "portal/add_ons.html", page_context(sub))
    verb = "remove" if request.POST.get("action") == "remove" else "add"
    price_id = (request.POST.get("price") or "")[:120]
    version = _number(request.POST.get("version"))
    try:
        if version != int(sub.Version or 0):
            raise actions.AddOnsChanged(_("The subscription changed since you looked."))
        change = _quote(sub, verb, price_id)
        if request.POST.get("step") != "confirm":
            return render(request, "portal/add_on_confirm.html", confirm_context(sub, change))
        if _number(request.POST.get("amount")) != confirm_context(sub, change)["amount_shown"]:
            raise actions.AddOnsChanged(_("The amounts changed since you looked."))
        apply = actions.remove if verb == "remove" else actions.add
        done = apply(sub, price_id, today=today(), actor=actor(request), expected_version=version)
    except actions.AddOnsChanged:
        return changed_since(request, "portal/add_ons.html", page_context(subscription_or_404(account_id, sub.sub_id)))
    except access.ConditionFailed:
        messages.warning(request, _("The subscription changed meanwhile: nothing was changed. Please try again."))
        return redirect("add_ons", sub_id=sub.sub_id)
    except AddOnRefused as refused:
        messages.warning(request, str(refused))
        return redirect("add_ons", sub_id=sub.sub_id)
    _said(request, sub, done)
    return redirect("subscription", sub_id=sub.sub_id)


def _number(text: str | None) -> int:
    try:
        return int(text or "")
    except ValueError:
        return -1  # nothing sent: never equal to a version or an amount


def _said(request: HttpRequest, sub: Subscription, done: AddOnsChange) -> None:
    when = local_day(done.effective, "j F Y")
    if done.added:
        messages.success(request, _("%(name)s is added: your payments include it from your next one, on %(date)s.")
                         % {"name": done.name, "date": when})
    else:
        messages.success(request, _("%(name)s is removed: you keep it until your next payment, on %(date)s.")
                         % {"name": done.name, "date": when})
