"""``/subscriptions/<id>/switch/``: switch a subscription to another product.
Who may see it: the subscription's customer. Staff switch from the customer's billing
page (billing/staff/switch_pages.py).

Two steps, as Stripe's customer portal does: choose the price (every live product's
active prices in the subscription's currency, monthly, yearly or every N, each said to
apply from today or from the next payment: docs/MONEY.md "Switching price or cadence"),
then confirm
the amounts (the signed quote: the credit for the unused paid days, the new product's
price for them, what is charged now; or, for a downgrade, from when the new price
applies). The confirm posts the amounts it showed; should they have changed meanwhile,
the page shows the new ones instead of charging. An upgrade's charge the bank wants the
customer to confirm (3-D Secure) is confirmed on the page with Stripe.js.
"""

from __future__ import annotations

from datetime import date

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import switch as actions
from billing.customers import customer_required
from billing.forms import SwitchProductForm
from billing.models import Subscription
from billing.rules.cadence_words import amount_per_period
from billing.rules.price_objects import terms_of
from billing.rules.price_words import price_words
from billing.rules.pricing import Interval
from billing.rules.projection import ComingCharge, coming_charges
from billing.rules.schedule import Cadence, cadence_of
from billing.rules.seat_lines import seats_words
from billing.rules.switch import SwitchQuote, SwitchRefused, applies_now, quantity_of
from billing.views.common import live_subscription
from core.localformat import local_date
from core.money import format_with_symbol
from core.pages import actor, today
from core.payments.errors import GatewayError
from core.payments.gateway import CardEntry

# Words need no anchor date; a cadence other than monthly must have one.
WORDS_ONLY = date(2000, 1, 1)
UNREACHABLE = "Our payment provider could not be reached: nothing was charged or changed. Please try again in a minute."


def target_words(amount: int, currency: str, interval: str, count: int) -> str:
    """"$19.99 a month", "€120.00 a year", "$30.00 every 3 months": a price in words."""
    cadence = Cadence(1, Interval(interval), int(count), None if (interval, count) == ("month", 1) else WORDS_ONLY)
    return amount_per_period(format_with_symbol(amount, currency), cadence)


def product_choices(sub: Subscription) -> list[tuple[str, str]]:
    """The prices ``sub`` may switch to (``actions.targets``: every live product's active
    prices in its currency but its own), labelled with the price in words and when it
    applies (``rules.switch.applies_now``). A product's default price is named by its
    SKU (the switch of product, as before prices), any other by its id."""
    choices = []
    seats = quantity_of(sub)  # kept by the switch: each price for them, as it would be charged
    for target in actions.targets(sub):
        now = applies_now(sub, target)
        value = target.sku if target.stored_price_id is None and not target.metered else target.price_id
        amount = target.amount_for(seats)
        if target.metered and target.price_id == sub.MeteredPriceId:  # its own, alone: from the next payment
            label = _("%(name)s — your usage alone, no fixed fee (from your next payment)") % {"name": target.name}
        elif target.metered:  # another metered price, alone: billing the usage from the next payment
            label = _("%(name)s — your usage alone (%(price)s), no fixed fee (from your next payment)") % {
                "name": target.name,
                "price": price_words(target.usage_terms, target.usage_unit) if target.usage_terms else ""}
        elif (target.interval, target.count) == ("month", 1):
            price = format_with_symbol(amount, target.currency)
            if now:
                label = _("%(name)s — %(price)s a month (upgrade: from today)") % {"name": target.name, "price": price}
            else:
                label = _("%(name)s — %(price)s a month (from your next payment)") % {"name": target.name,
                                                                                      "price": price}
        else:
            words = target_words(amount, target.currency, target.interval, target.count)
            label = (_("%(name)s — %(price)s (from today)") if now else
                     _("%(name)s — %(price)s (from your next payment)")) % {"name": target.name, "price": words}
        choices.append((value, label))
    return choices


def usage_price_words(price_id: str) -> str:
    """A metered price in words ("first 1,000 calls free, then $0.002 a call"), read by its id."""
    price = access.get_price(price_id)
    return price_words(terms_of(price), price.UnitLabel) if price is not None else price_id


def seat_words(quote: SwitchQuote, unit_price: str) -> str:
    """The seats the switch keeps, beside the new price's words, as the subscription page
    says them ("$20.00 a seat × 5", "5 seats, priced by tiers"); "" for one seat.
    ``unit_price``: the new price of one seat, formatted as the page formats money."""
    return seats_words(quote.quantity, None if quote.unit_amount is None else unit_price)


def charge_after_switch(sub: Subscription, quote: SwitchQuote) -> ComingCharge | None:
    """The first payment after the switch, as the payment run will take it: the next
    coming charge of the subscription as the switch leaves it (``actions.switch.as_switched``:
    the new price, and cadence), less the coupon's discount for it (``rules.projection``)."""
    charges = coming_charges(actions.as_switched(sub, quote), 1, tax=access.tax_terms(sub))
    return charges[0] if charges else None


def quote_context(sub: Subscription, quote: SwitchQuote) -> dict:
    money = sub.Currency
    # usage alone: its next payment is the usage, not known yet (the subscription page's
    # estimate says it as it grows); no amount is announced here
    alone = quote.new_price == 0
    after = None if alone else charge_after_switch(sub, quote)
    cadence = quote.new_cadence or cadence_of(sub)
    due_now = actions.charged_now(sub, quote)
    return {
        "quote": quote, "old_price": format_with_symbol(quote.old_price, money),
        "new_price": format_with_symbol(quote.new_price, money),
        # "€120.00 a year": the new price in words, with its cadence
        "new_price_words": target_words(quote.new_price, money, str(cadence.interval), cadence.count) if not alone
        else _("No fixed fee: you pay for your usage") if quote.new_price_id == sub.MeteredPriceId
        else _("No fixed fee: you pay for your usage, %(price)s") % {"price": usage_price_words(quote.new_price_id)},
        "monthly": cadence.is_monthly,
        "seat_words": seat_words(quote, format_with_symbol(quote.unit_amount or 0, money)),
        "next_charge": after, "next_amount": format_with_symbol(after.amount, money) if after else "",
        "charge": format_with_symbol(quote.charge, money), "credit": format_with_symbol(quote.credit, money),
        "due_now": format_with_symbol(due_now, money),
        # Prices before tax: the tax the charge adds, its own line, so the lines add up.
        "tax_added": format_with_symbol(due_now - quote.due_now, money) if due_now > quote.due_now else "",
        "refund": format_with_symbol(actions.refunded_now(sub, quote), money),
    }


@require_http_methods(["GET", "POST"])
@customer_required
@live_subscription(gettext_lazy("This subscription is cancelled: there is nothing to switch."))
def switch_product(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    choices = product_choices(sub)
    form = SwitchProductForm(request.POST if request.method == "POST" else None, choices=choices)
    if request.method == "POST" and form.is_valid():
        sku = form.cleaned_data["sku"]
        try:
            if request.POST.get("charge_id"):  # back from the bank's page (3-D Secure)
                done = actions.finish_authenticated(sub, sku, request.POST["charge_id"], today=today(),
                                                    actor=actor(request))
            elif request.POST.get("step") == "confirm":
                expected = SwitchQuote(**_expected(sub, request))
                done = actions.switch(sub, sku, today=today(), actor=actor(request), expected=expected)
            else:
                quote = actions.quote(sub, sku, today=today())
                return render(request, "portal/switch_confirm.html", {"sub": sub, "form": form, **quote_context(sub, quote)})
        except actions.QuoteChanged as changed:
            messages.warning(request, str(changed))
            quote = actions.quote(sub, sku, today=today())
            return render(request, "portal/switch_confirm.html", {"sub": sub, "form": form, **quote_context(sub, quote)})
        except SwitchRefused as refused:
            messages.warning(request, str(refused))
            return redirect("switch_product", sub_id=sub.sub_id)
        except actions.SwitchDeclined as declined:
            messages.error(request, _("Your card was declined (%(reason)s): nothing was switched.") % {"reason": declined})
            return redirect("switch_product", sub_id=sub.sub_id)
        except access.ConditionFailed:
            messages.warning(request, _("The subscription changed meanwhile: nothing was switched, and any amount "
                                        "taken is refunded. Please try again."))
            return redirect("switch_product", sub_id=sub.sub_id)
        except GatewayError:
            messages.error(request, _(UNREACHABLE))
            return redirect("switch_product", sub_id=sub.sub_id)
        if done.client_secret:  # the bank asks the customer to confirm the upgrade's charge
            entry = CardEntry(client_secret=done.client_secret, publishable_key=settings.STRIPE_PUBLISHABLE_KEY,
                              js_url=settings.STRIPE_JS_URL)
            return render(request, "portal/switch_authenticate.html", {
                "sub": sub, "entry": entry, "hidden": [("sku", sku), ("charge_id", done.charge_id)],
                **quote_context(sub, done.quote)})
        _said(request, done)
        return redirect("subscription", sub_id=sub.sub_id)
    coming = coming_charges(sub, 1, tax=access.tax_terms(sub))
    return render(request, "portal/switch.html", {"sub": sub, "form": form, "has_choices": bool(choices),
                                                  "next_charge": coming[0] if coming else None,
                                                  # said up front, not after choosing (one switch a day)
                                                  "switched_today": sub.LastSwitchDate == today().isoformat()})


def _expected(sub: Subscription, request: HttpRequest) -> dict:
    """The quote the confirm page showed (its hidden fields): only what ``switch`` compares."""
    def number(name: str) -> int:
        try:
            return int(request.POST.get(name, ""))
        except ValueError:
            return -1
    charge, credit = number("charge"), number("credit")
    return {"old_sku": sub.SKU, "new_sku": request.POST.get("sku", ""), "new_name": "", "old_price": 0, "new_price": 0,
            "upgrade": request.POST.get("upgrade") == "1", "effective": today(), "paid_through": None,
            "charge": charge, "credit": credit}


def _said(request: HttpRequest, done: actions.Switched) -> None:
    money = done.sub.Currency
    if done.quote.upgrade:
        if done.charged and done.quote.restarts:
            messages.success(request, _("You now have %(product)s: a new billing period started today. %(amount)s was "
                                        "charged, its price less the unused days already paid (receipt "
                                        "%(receipt)s).") % {
                "product": done.sub.ProductName, "amount": format_with_symbol(done.charged, money),
                "receipt": done.receipt_id})
        elif done.charged:
            messages.success(request, _("You now have %(product)s. %(amount)s was charged for the days already paid "
                                        "(receipt %(receipt)s).") % {
                "product": done.sub.ProductName, "amount": format_with_symbol(done.charged, money),
                "receipt": done.receipt_id})
        elif done.refunded:
            messages.success(request, _("You now have %(product)s. %(amount)s was refunded: the days already paid cost "
                                        "less at its price.") % {
                "product": done.sub.ProductName, "amount": format_with_symbol(done.refunded, money)})
        else:
            messages.success(request, _("You now have %(product)s; nothing more was charged.") % {
                "product": done.sub.ProductName})
    else:
        coming = coming_charges(done.sub, 1, tax=access.tax_terms(done.sub))  # the switched subscription's next payment, as it will be charged
        messages.success(request, _("From %(date)s you will have %(product)s: that payment is %(amount)s. Until "
                                    "then you keep what you paid for.") % {
            "date": local_date(done.quote.effective, "j F Y"), "product": done.sub.ProductName,
            "amount": format_with_symbol(coming[0].amount if coming else done.quote.new_price, money)})
