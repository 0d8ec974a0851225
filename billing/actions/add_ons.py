"""Adding and removing a subscription's add-ons, for the customer, staff and the API
(rules and the choice of "from the next payment": billing/rules/add_ons.py).

Nothing is charged or refunded now: the change is the next payment's fee, written with
its audit event and ``subscription.updated`` in one transaction on the version read
(billing/access/add_ons.py). A page or call made against another version is refused
as stale (``AddOnsChanged``) before anything is written; a repeated request finds the
add-on there already (or gone), and says so.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Price, Product, ProductStatus, Subscription
from billing.notify import manage_url, tell
from billing.operations.payments import next_charge
from billing.rules.add_ons import (
    AddOnOffer,
    AddOnRefused,
    AddOnsChange,
    adding,
    offer_refusal,
    removing,
)
from billing.rules.cadence_words import amount_per_period
from billing.rules.price_choice import TAXED_OTHERWISE, PriceRefused, choose_price, subscribable, taxed_alike
from billing.rules.projection import ComingCharge, coming_charges
from billing.rules.schedule import cadence_of
from core.mail import money_text


class AddOnsChanged(AddOnRefused):
    """The subscription changed since the page (or the caller) read it: nothing was done."""


def offer_of(price: Price, product: Product) -> AddOnOffer:
    """``price`` (of ``product``) as an add-on: its amount for one (``AddOnRefused`` for a
    price that cannot be subscribed to: ``price_choice.choose_price``'s reasons)."""
    try:
        chosen = choose_price(price, product, None)
    except PriceRefused as refused:
        raise AddOnRefused(str(refused)) from None
    return AddOnOffer(chosen.price_id, product.SKU, product.Name, chosen.amount, chosen.currency,
                      chosen.interval, chosen.interval_count, chosen.per_seat, product.sold_as_add_on)


def offer_for(sub: Subscription, price_id: str) -> AddOnOffer:
    """The price ``price_id`` as an add-on of ``sub`` (two GetItems: the price, its
    product); ``AddOnRefused`` when no product offers it or it is taxed otherwise."""
    price = access.get_price(price_id) if price_id else None
    product = access.get_product(price.SKU) if price is not None else None
    if price is None or product is None or product.Status != ProductStatus.ACTIVE:
        raise AddOnRefused(_("That add-on is not offered."))
    if not taxed_alike(price, sub.TaxBehavior):
        raise AddOnRefused(TAXED_OTHERWISE)
    return offer_of(price, product)


def offers(sub: Subscription, today: date) -> list[AddOnOffer]:
    """Every price ``sub`` may add now, product by product (one Query of the catalog):
    the fixed prices of the live products sold as add-ons (a product without stored
    prices: its default one) that ``check_add`` accepts."""
    found = []
    products, prices = access.list_products_with_prices()
    for product in products:
        if not product.sold_as_add_on:
            continue
        for price in prices.get(product.SKU) or [access.default_price(product)]:
            if price.Meter or not subscribable(price) or not taxed_alike(price, sub.TaxBehavior):
                continue
            try:
                offer = offer_of(price, product)
            except AddOnRefused:
                continue
            if offer_refusal(sub, offer, today) is None:
                found.append(offer)
    return found


def add(sub: Subscription, price_id: str, *, today: date, actor: str,
        expected_version: int | None = None) -> AddOnsChange:
    """Add the price ``price_id`` to ``sub`` from its next payment. ``expected_version``:
    the version the page (or the caller) read; another now is ``AddOnsChanged``."""
    _same_version(sub, expected_version)
    change = adding(sub, offer_for(sub, price_id), today)
    access.change_add_ons(sub, change, today=today, actor=actor)
    _tell(sub, change)
    return change


def remove(sub: Subscription, price_id: str, *, today: date, actor: str,
           expected_version: int | None = None) -> AddOnsChange:
    """Remove the add-on ``price_id`` from ``sub`` from its next payment (kept until then)."""
    _same_version(sub, expected_version)
    change = removing(sub, price_id, today)
    access.change_add_ons(sub, change, today=today, actor=actor)
    _tell(sub, change)
    return change


def quote_add(sub: Subscription, price_id: str, *, today: date) -> tuple[AddOnOffer, AddOnsChange]:
    """What adding ``price_id`` would do (nothing written): the offer and the change."""
    offer = offer_for(sub, price_id)
    return offer, adding(sub, offer, today)


def next_payment_after(sub: Subscription, change: AddOnsChange) -> ComingCharge | None:
    """The next payment as the run will charge it after ``change`` (the confirm page's):
    the projection's, at the new fee, taxed as charged."""
    after = coming_charges(sub, 1, price=change.new_price, tax=access.tax_terms(sub))
    return after[0] if after else None


def _same_version(sub: Subscription, expected_version: int | None) -> None:
    if expected_version is not None and int(sub.Version or 0) != expected_version:
        raise AddOnsChanged(_("The subscription changed since you looked: please check its add-ons again."))


def _tell(sub: Subscription, change: AddOnsChange) -> None:
    """The "your add-ons" e-mail: which add-on at what price, from which payment, and the
    next payment as the payment run will take it (``next_charge``)."""
    price = money_text(change.amount, sub.Currency)
    context: dict[str, Any] = {
        "add_on": change.name, "added": change.added, "effective": change.effective,
        # its price a period, in the e-mail's language (lazy: rendered in the customer's)
        "add_on_price": lazy(amount_per_period, str)(price, cadence_of(sub)), "manage_url": manage_url(sub),
    }
    if sub.is_live and sub.NextPaymentDate:
        coming = next_charge(sub)
        context |= {"next_date": coming.date, "next_amount": money_text(coming.amount, sub.Currency)}
    subject = _("Your add-ons: {name} added") if change.added else _("Your add-ons: {name} removed")
    tell("add_ons_changed", sub, format_lazy(subject, name=change.name), **context)
