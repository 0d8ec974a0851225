"""Subscribing to a chosen price of a product (docs/PRICING.md "Subscribing to a price"):
what a subscription to ``price`` at ``quantity`` pays a period, at which cadence, in which
currency, after how many free days, and how many seats it holds. One function, read by
the portal's confirmation page, the API and the action that charges, so what a page
shows is what is charged.

A licensed ``per_unit`` price in whole minor units can be subscribed to, and a licensed
``tiered`` or ``package`` price sold by the seat (a price by tiers of seats: its amount the
price's ``amount_for`` the seats, ``rules.seats``) when no number of seats is free. A
metered price is subscribed to beside such a price, or alone (``choose_usage_only``: no
fixed fee, each payment the usage of the period just ended); an archived price is refused
(its subscribers keep theirs)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from billing.models import Price, PriceStatus, Product
from billing.rules.price_objects import DEFAULT_PRICE_PREFIX, terms_of
from billing.rules.pricing import BillingScheme, PriceTerms, TiersMode, seats_amount
from billing.rules.seats import QuantityOutOfBounds, check_quantity, quantity_bounds
from billing.rules.tax import stored_tax_behavior
from billing.rules.usage_metadata import MAX_METERED_PRICES


class PriceRefused(ValueError):
    """The price cannot be subscribed to; ``field`` is the form's or the API's field
    (``price`` or ``quantity``) and ``str()`` says why."""

    def __init__(self, message: object, field: str = "price") -> None:
        super().__init__(str(message))
        self.field = field


@dataclass(frozen=True)
class PriceChoice:
    """A subscription to a price: ``amount`` a period (= ``unit_amount`` × ``quantity``, or
    the tiers' amount for the seats: ``unit_amount`` None)."""

    price_id: str
    amount: int
    unit_amount: int | None
    quantity: int
    currency: str
    interval: str
    interval_count: int
    trial_days: int
    per_seat: bool
    # A metered price alone (``price_id``): no fixed fee (``amount`` 0), its usage billed in arrears.
    usage_only: bool = False
    # The price's ``TaxBehavior`` ("inclusive", "exclusive"; None: as the seller's profile says).
    tax_behavior: str | None = None

    @property
    def stored_price_id(self) -> str | None:
        """The subscription's ``PriceId``: none for its product's derived default price, nor
        for usage alone (its metered price is its ``MeteredPriceId``)."""
        return None if self.usage_only or self.price_id.startswith(DEFAULT_PRICE_PREFIX) else self.price_id

    @property
    def metered_price_id(self) -> str | None:
        """The metered price a subscription to usage alone is made with (None otherwise)."""
        return self.price_id if self.usage_only else None

    def attributes(self) -> dict[str, object]:
        """The subscription's seat attributes: none for a price that is not per seat,
        which pays its whole amount (as every subscription made before seats)."""
        if not self.per_seat:
            return {}
        return {"quantity": self.quantity, "unit_amount": self.unit_amount} if self.unit_amount is not None \
            else {"quantity": self.quantity}


def is_per_seat(price: Price) -> bool:
    """A price sold by the seat: it names its unit or its bounds (the quantity field shows)."""
    return bool(price.UnitLabel) or price.MinQuantity is not None or price.MaxQuantity is not None


def by_tiers(price: Price) -> bool:
    """A price whose amount is not one amount a unit: tiered, or by packages."""
    return price.BillingScheme == BillingScheme.TIERED or price.PackageSize is not None


def never_free(terms: PriceTerms) -> bool:
    """Whether every number of seats from one costs at least a minor unit: a graduated
    price's first tier (every quantity enters it), every tier of a volume price, a
    package's price, each charging a whole minor unit a seat or a flat amount."""
    if terms.billing_scheme != BillingScheme.TIERED:
        return terms.unit_amount is not None and terms.unit_amount >= 1
    tiers = terms.tiers[:1] if terms.tiers_mode == TiersMode.GRADUATED else terms.tiers
    return all(tier.unit_amount >= 1 or tier.flat_amount >= 1 for tier in tiers)


def subscribable(price: Price) -> bool:
    """Whether ``price`` can be a subscription's fixed price (subscribed to, or switched to)."""
    if price.Status != PriceStatus.ACTIVE or price.Meter:
        return False
    if by_tiers(price):
        return is_per_seat(price) and never_free(terms_of(price))
    return (price.BillingScheme == BillingScheme.PER_UNIT and price.UnitAmount is not None
            and int(price.UnitAmount) > 0)


def offered(price: Price) -> bool:
    """Whether the subscribe page lists ``price`` among its product's choices: a price it
    can be subscribed to, or an active metered price, for its usage alone."""
    return subscribable(price) or (bool(price.Meter) and price.Status == PriceStatus.ACTIVE)


def choose_price(price: Price | None, product: Product, quantity: int | None = None) -> PriceChoice:
    """What subscribing to ``price`` (of ``product``) at ``quantity`` means;
    ``PriceRefused`` naming the field otherwise. ``quantity``: None is one, or a seat
    price's minimum."""
    if price is None or price.SKU != product.SKU:
        raise PriceRefused(_("This price is not one of this product's."))
    if price.Status != PriceStatus.ACTIVE:
        raise PriceRefused(_("This price has been archived: it can no longer be subscribed to."))
    if price.Meter:  # subscribed to alone by ``choose_offer``; never switched to as a fixed price
        raise PriceRefused(_("A metered price bills usage: it cannot be a subscription's fixed price."))
    if not subscribable(price):
        if by_tiers(price) and not is_per_seat(price):
            raise PriceRefused(_("A price by tiers or packages can be subscribed to only when it is sold by the "
                                 "seat."))
        raise PriceRefused(_("Only a price per unit in whole amounts, or by tiers of seats that are never free, "
                             "can be subscribed to."))
    per_seat = is_per_seat(price)
    bounds = quantity_bounds(price) if per_seat else (1, 1)
    if quantity is None:
        quantity = max(bounds[0], 1)
    try:
        check_quantity(quantity, (max(bounds[0], 1), bounds[1]))
    except QuantityOutOfBounds as refused:
        if not per_seat:
            raise PriceRefused(_("This price is for one subscription: its quantity is 1."), "quantity") from None
        raise PriceRefused(refused, "quantity") from None
    trial = price.TrialDays if price.TrialDays is not None else product.trial_days
    terms = terms_of(price) if by_tiers(price) else None
    unit = None if terms is not None else int(price.UnitAmount)
    amount = seats_amount(quantity, unit=unit, terms=terms)
    return PriceChoice(price.PriceId, amount, unit, quantity, price.Currency.upper(), str(price.Interval),
                       int(price.IntervalCount or 1), int(trial or 0), per_seat, tax_behavior=price.TaxBehavior)


def bills_with(metered: Price, interval: str | None, interval_count: int | None) -> bool:
    """Whether ``metered``'s usage may be billed with the payments of a fixed price of that
    cadence (None: the monthly default): only on its own cadence, as Stripe requires of a
    subscription's items, since its tiers count the usage of one of its periods ("the first
    1,000 calls a month free" must not be a year's)."""
    return (metered.Interval, int(metered.IntervalCount or 1)) == (interval or "month", int(interval_count or 1))


def taxed_alike(price: Price | None, tax_behavior: str | None) -> bool:
    """Whether ``price`` (None: a product's default price) charges the tax as a price of
    ``tax_behavior`` does (``Price.TaxBehavior``: included, added, or as the seller's
    profile says). One charge's amounts include its tax or have it added, so the prices
    a subscription bills together, and the one it switches to, must say the same."""
    return stored_tax_behavior(price.TaxBehavior if price is not None else None) == stored_tax_behavior(tax_behavior)


TAXED_OTHERWISE = _("This price charges the tax otherwise than your subscription (included in its amounts, or "
                    "added to them): a subscription's charges are taxed one way.")


def metered_prices_of(prices: list[Price], currency: str, interval: str | None = None,
                      interval_count: int | None = None, tax_behavior: str | None = None) -> list[Price]:
    """The metered prices a subscription in ``currency`` to the product of ``prices`` (its
    active prices, oldest first) bills its usage by, in arrears, beside its fixed price
    (docs/USAGE.md "Several metered prices"): the active metered prices in that currency,
    of the fixed price's cadence (``bills_with``; None: monthly) and its tax behaviour
    (``taxed_alike``), oldest first, the oldest of each meter (two of one meter would bill
    its events twice), at most ``MAX_METERED_PRICES``; [] when the product has none."""
    found: list[Price] = []
    for p in prices:
        if p.Meter and p.Status == PriceStatus.ACTIVE and p.Currency.upper() == currency.upper() \
                and bills_with(p, interval, interval_count) and taxed_alike(p, tax_behavior) \
                and all(f.Meter != p.Meter for f in found):
            found.append(p)
    return found[:MAX_METERED_PRICES]


def choose_usage_only(price: Price | None, product: Product) -> PriceChoice:
    """A subscription to ``product``'s metered ``price`` alone (Stripe's subscription whose
    one item is metered): no fixed fee, on the price's cadence and in its currency, each
    payment after the first billing the usage of the period just ended; the first pays
    nothing (a receipt of 0, as Stripe's first invoice of such a subscription). No free
    trial: nothing is charged before usage anyway. ``PriceRefused`` as ``choose_price``."""
    if price is None or price.SKU != product.SKU:
        raise PriceRefused(_("This price is not one of this product's."))
    if price.Status != PriceStatus.ACTIVE:
        raise PriceRefused(_("This price has been archived: it can no longer be subscribed to."))
    if not price.Meter:
        raise PriceRefused(_("Only a metered price can be subscribed to for its usage alone."))
    return PriceChoice(price.PriceId, 0, None, 1, price.Currency.upper(), str(price.Interval),
                       int(price.IntervalCount or 1), 0, False, usage_only=True, tax_behavior=price.TaxBehavior)


def choose_offer(price: Price | None, product: Product, quantity: int | None = None) -> PriceChoice:
    """A price the subscribe page offered (``offered``): a metered one for its usage alone
    (one subscription, no seats), any other as ``choose_price``."""
    if price is not None and price.Meter:
        if quantity not in (None, 1):
            raise PriceRefused(_("This price is for one subscription: its quantity is 1."), "quantity")
        return choose_usage_only(price, product)
    return choose_price(price, product, quantity)


def choose_metered_price(price: Price | None, product: Product, currency: str) -> Price:
    """The metered price chosen with ``product`` on the subscribe page, as it is now:
    ``PriceRefused`` when it can no longer be (archived meanwhile, or not this product's
    metered price in ``currency``)."""
    if price is None or price.SKU != product.SKU or not price.Meter or price.Currency.upper() != currency.upper():
        raise PriceRefused(_("This price is not one of this product's."))
    if price.Status != PriceStatus.ACTIVE:
        raise PriceRefused(_("This price has been archived: it can no longer be subscribed to."))
    return price
