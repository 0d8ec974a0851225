"""Subscribing to a chosen price of a product (docs/PRICING.md "Subscribing to a price"):
what a subscription to ``price`` at ``quantity`` pays a period, at which cadence, in which
currency, after how many free days, and how many seats it holds. One function, read by
the portal's confirmation page, the API and the action that charges, so what a page
shows is what is charged.

Only a licensed ``per_unit`` price in whole minor units can be subscribed to: a metered
price bills the usage of a period and a tiered or package price's amount depends on the
quantity in ways the seats rules do not follow yet; both are refused with words, as is
an archived price (its subscribers keep theirs)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from billing.models import Price, PriceStatus, Product
from billing.rules.price_objects import DEFAULT_PRICE_PREFIX
from billing.rules.pricing import BillingScheme
from billing.rules.seats import QuantityOutOfBounds, check_quantity, quantity_bounds


class PriceRefused(ValueError):
    """The price cannot be subscribed to; ``field`` is the form's or the API's field
    (``price`` or ``quantity``) and ``str()`` says why."""

    def __init__(self, message: object, field: str = "price") -> None:
        super().__init__(str(message))
        self.field = field


@dataclass(frozen=True)
class PriceChoice:
    """A subscription to a price: ``amount`` a period (= ``unit_amount`` × ``quantity``)."""

    price_id: str
    amount: int
    unit_amount: int
    quantity: int
    currency: str
    interval: str
    interval_count: int
    trial_days: int
    per_seat: bool

    @property
    def stored_price_id(self) -> str | None:
        """The subscription's ``PriceId``: none for its product's derived default price."""
        return None if self.price_id.startswith(DEFAULT_PRICE_PREFIX) else self.price_id

    def attributes(self) -> dict[str, object]:
        """The subscription's seat attributes: none for a price that is not per seat,
        which pays its whole amount (as every subscription made before seats)."""
        return {"quantity": self.quantity, "unit_amount": self.unit_amount} if self.per_seat else {}


def is_per_seat(price: Price) -> bool:
    """A price sold by the seat: it names its unit or its bounds (the quantity field shows)."""
    return bool(price.UnitLabel) or price.MinQuantity is not None or price.MaxQuantity is not None


def subscribable(price: Price) -> bool:
    """Whether the portal lists ``price`` among a product's choices."""
    return (price.Status == PriceStatus.ACTIVE and not price.Meter and price.BillingScheme == BillingScheme.PER_UNIT
            and price.PackageSize is None and price.UnitAmount is not None and int(price.UnitAmount) > 0)


def choose_price(price: Price | None, product: Product, quantity: int | None = None) -> PriceChoice:
    """What subscribing to ``price`` (of ``product``) at ``quantity`` means;
    ``PriceRefused`` naming the field otherwise. ``quantity``: None is one, or a seat
    price's minimum."""
    if price is None or price.SKU != product.SKU:
        raise PriceRefused(_("This price is not one of this product's."))
    if price.Status != PriceStatus.ACTIVE:
        raise PriceRefused(_("This price has been archived: it can no longer be subscribed to."))
    if price.Meter:
        raise PriceRefused(_("A metered price cannot be subscribed to yet."))
    if not subscribable(price):
        raise PriceRefused(_("Only a price per unit in whole amounts can be subscribed to yet."))
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
    unit = int(price.UnitAmount)
    trial = price.TrialDays if price.TrialDays is not None else product.trial_days
    return PriceChoice(price.PriceId, unit * quantity, unit, quantity, price.Currency.upper(), str(price.Interval),
                       int(price.IntervalCount or 1), int(trial or 0), per_seat)


def bills_with(metered: Price, interval: str | None, interval_count: int | None) -> bool:
    """Whether ``metered``'s usage may be billed with the payments of a fixed price of that
    cadence (None: the monthly default): only on its own cadence, as Stripe requires of a
    subscription's items, since its tiers count the usage of one of its periods ("the first
    1,000 calls a month free" must not be a year's)."""
    return (metered.Interval, int(metered.IntervalCount or 1)) == (interval or "month", int(interval_count or 1))


def metered_price_of(prices: list[Price], currency: str, interval: str | None = None,
                     interval_count: int | None = None) -> Price | None:
    """The metered price a subscription in ``currency`` to the product of ``prices`` (its
    active prices, oldest first) bills its usage by, in arrears (docs/USAGE.md "Billing a
    period"): the oldest active metered price in that currency and of the fixed price's
    cadence (``bills_with``; None: monthly), as a subscription names one at most; None when
    the product has none."""
    return next((p for p in prices if p.Meter and p.Status == PriceStatus.ACTIVE
                 and p.Currency.upper() == currency.upper() and bills_with(p, interval, interval_count)), None)


def choose_metered_price(price: Price | None, product: Product, currency: str) -> Price:
    """The metered price chosen with ``product`` on the subscribe page, as it is now:
    ``PriceRefused`` when it can no longer be (archived meanwhile, or not this product's
    metered price in ``currency``)."""
    if price is None or price.SKU != product.SKU or not price.Meter or price.Currency.upper() != currency.upper():
        raise PriceRefused(_("This price is not one of this product's."))
    if price.Status != PriceStatus.ACTIVE:
        raise PriceRefused(_("This price has been archived: it can no longer be subscribed to."))
    return price
