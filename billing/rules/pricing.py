"""The price models (docs/PRICING.md), in Stripe's names: what a quantity of a price costs.

Pure arithmetic on integer minor units: no I/O, no settings. A unit amount may be a
fraction of the minor unit (Stripe's ``unit_amount_decimal``: $0.002 a call is 0.2
cents), so the models compute in ``Decimal`` and round **once per line**: a per-unit or
package line, a volume line, and each tier of a graduated price is rounded half up to
the minor unit on its own, then the rounded parts are added (as an invoice shows them).

* ``per_unit``: ``unit_amount`` × quantity;
* ``package`` (Stripe: ``per_unit`` with ``transform_quantity`` {divide_by, round: up}):
  ``unit_amount`` × ceil(quantity / package size);
* ``tiered`` ``graduated``: each tier prices the units that fall in it, plus its
  ``flat_amount`` once the quantity enters it;
* ``tiered`` ``volume``: the one tier the whole quantity falls in prices every unit, plus
  that tier's ``flat_amount``.

Quantity 0: a graduated price enters no tier (0), a volume price falls in its first tier
(that tier's ``flat_amount``), as localstripe computes Stripe's tiers.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum

# Stripe's ``unit_amount_decimal``: at most 12 decimal places of the minor unit.
MAX_DECIMAL_PLACES = 12
# Far above any real price or quantity, and products of the two stay exact in the
# context below (DynamoDB keeps 38 digits; the default Decimal context only 28).
MAX_AMOUNT = 10**12 - 1
MAX_QUANTITY = 10**12 - 1
_EXACT = decimal.Context(prec=60, rounding=ROUND_HALF_UP)


class BillingScheme(StrEnum):
    PER_UNIT = "per_unit"
    TIERED = "tiered"


class TiersMode(StrEnum):
    GRADUATED = "graduated"
    VOLUME = "volume"


class Interval(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"


# Stripe's own limits of a recurring price's interval_count: at most three years.
MAX_INTERVAL_COUNT = {Interval.DAY: 1095, Interval.WEEK: 156, Interval.MONTH: 36, Interval.YEAR: 3}


# A recurring amount as a month's share (MRR, docs/ANALYTICS.md): periods a year per
# interval, so a year is 1/12 of itself, a week 52/12 and a day 365/12 (ChartMogul's and
# Stripe's normalisation).
PERIODS_A_YEAR = {Interval.DAY: 365, Interval.WEEK: 52, Interval.MONTH: 12, Interval.YEAR: 1}


def monthly_amount(amount: int, interval: str | None = None, count: int | None = None) -> int:
    """``amount`` charged every ``count`` ``interval`` as a month's share, rounded half up
    to the minor unit (null interval: a month, the subscriptions made before cadences)."""
    every = Interval(interval or Interval.MONTH)
    numerator, denominator = amount * PERIODS_A_YEAR[every], 12 * int(count or 1)
    return (2 * numerator + denominator) // (2 * denominator)


def decimal_amount(value: object, what: str = "unit amount") -> Decimal:
    """A non-negative amount in minor units, possibly fractional (``"0.2"``, ``Decimal``,
    an int): refused with ``ValueError`` when it is not a finite number, is negative, is
    past ``MAX_AMOUNT`` or has more than 12 decimal places. A float is refused: its
    binary value is not the decimal the caller wrote."""
    if isinstance(value, (bool, float)):
        raise ValueError(f"{what} must be an integer or a decimal string, not {value!r}")
    try:
        amount = Decimal(value) if isinstance(value, (int, str, Decimal)) else None
    except decimal.InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite():
        raise ValueError(f"{what} must be a number of minor units, not {value!r}")
    if amount < 0:
        raise ValueError(f"{what} must not be negative")
    if amount > MAX_AMOUNT:
        raise ValueError(f"{what} must be at most {MAX_AMOUNT}")
    if -amount.normalize().as_tuple().exponent > MAX_DECIMAL_PLACES:
        raise ValueError(f"{what} has more than {MAX_DECIMAL_PLACES} decimal places")
    return amount + 0  # -0 -> 0


def _whole(value: object, what: str, low: int = 0, high: int = MAX_AMOUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{what} must be from {low} to {high}, not {value}")
    return value


@dataclass(frozen=True)
class Tier:
    """One tier: the units up to and including ``up_to`` (None: no end), each at
    ``unit_amount`` (minor units, may be fractional), and ``flat_amount`` for the tier."""

    up_to: int | None
    unit_amount: Decimal = Decimal(0)
    flat_amount: int = 0

    def __post_init__(self) -> None:
        if self.up_to is not None:
            _whole(self.up_to, "a tier's up_to", 1, MAX_QUANTITY)
        object.__setattr__(self, "unit_amount", decimal_amount(self.unit_amount, "a tier's unit_amount"))
        _whole(self.flat_amount, "a tier's flat_amount")


def check_tiers(tiers: tuple[Tier, ...]) -> None:
    """Ascending ``up_to``, the last one open-ended (None: Stripe's ``inf``) and only the last."""
    if not tiers:
        raise ValueError("a tiered price needs at least one tier")
    for position, tier in enumerate(tiers[:-1], start=1):
        if tier.up_to is None:
            raise ValueError(f"only the last tier may have no up_to (tier {position} has none)")
    if tiers[-1].up_to is not None:
        raise ValueError("the last tier must have no up_to (it takes every unit past the others)")
    bounds = [tier.up_to for tier in tiers[:-1]]
    for position, (low, high) in enumerate(zip(bounds, bounds[1:], strict=False), start=2):
        if high <= low:  # type: ignore[operator]
            raise ValueError(f"tiers' up_to must be ascending: tier {position} ({high}) is not above {low}")


@dataclass(frozen=True)
class PriceTerms:
    """What a price charges and how often: everything ``amount_for`` and the price's words
    need, checked when made (``ValueError`` names what is wrong)."""

    currency: str
    billing_scheme: BillingScheme = BillingScheme.PER_UNIT
    unit_amount: Decimal | None = None  # per_unit: minor units, may be fractional
    tiers_mode: TiersMode | None = None
    tiers: tuple[Tier, ...] = field(default=())
    package_size: int | None = None  # Stripe's transform_quantity.divide_by (rounded up)
    interval: Interval = Interval.MONTH
    interval_count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.currency, str) or len(self.currency) != 3 or not self.currency.isalpha():
            raise ValueError(f"currency must be a three-letter code, not {self.currency!r}")
        object.__setattr__(self, "currency", self.currency.upper())
        object.__setattr__(self, "billing_scheme", _member(BillingScheme, self.billing_scheme, "billing_scheme"))
        object.__setattr__(self, "interval", _member(Interval, self.interval, "interval"))
        _whole(self.interval_count, "interval_count", 1, MAX_INTERVAL_COUNT[self.interval])
        object.__setattr__(self, "tiers", tuple(self.tiers))
        if self.billing_scheme == BillingScheme.PER_UNIT:
            if self.unit_amount is None:
                raise ValueError("a per_unit price needs a unit_amount")
            object.__setattr__(self, "unit_amount", decimal_amount(self.unit_amount))
            if self.tiers or self.tiers_mode is not None:
                raise ValueError("tiers and tiers_mode belong to a tiered price only")
            if self.package_size is not None:
                _whole(self.package_size, "package size (transform_quantity.divide_by)", 2, MAX_QUANTITY)
        else:
            if self.unit_amount is not None:
                raise ValueError("a tiered price has its unit amounts in its tiers, not unit_amount")
            if self.package_size is not None:
                raise ValueError("transform_quantity (a package) belongs to a per_unit price only")
            if self.tiers_mode is None:
                raise ValueError("a tiered price needs tiers_mode: graduated or volume")
            object.__setattr__(self, "tiers_mode", _member(TiersMode, self.tiers_mode, "tiers_mode"))
            check_tiers(self.tiers)

    @property
    def model(self) -> str:
        """per_unit, package, graduated or volume."""
        if self.billing_scheme == BillingScheme.TIERED:
            return str(self.tiers_mode)
        return "package" if self.package_size else "per_unit"


def _member(enum: type[StrEnum], value: object, what: str) -> StrEnum:
    try:
        return enum(value)
    except ValueError:
        raise ValueError(f"{what} must be one of {', '.join(enum)}, not {value!r}") from None


def line(unit_amount: Decimal, units: int) -> int:
    """One line's amount: ``unit_amount`` × ``units``, rounded half up to the minor unit."""
    return int(_EXACT.multiply(unit_amount, Decimal(units)).quantize(Decimal(1), rounding=ROUND_HALF_UP,
                                                                         context=_EXACT))


def packages(quantity: int, size: int) -> int:
    """``quantity`` in packages of ``size``, a part package counting whole (rounded up)."""
    return -(-quantity // size)


def graduated_parts(tiers: tuple[Tier, ...], quantity: int) -> list[tuple[Tier, int, int]]:
    """The tiers a quantity enters: (tier, its units, its rounded amount with its flat amount)."""
    parts: list[tuple[Tier, int, int]] = []
    below = 0
    for tier in tiers:
        if quantity <= below:
            break
        top = quantity if tier.up_to is None else min(quantity, tier.up_to)
        units = top - below
        parts.append((tier, units, line(tier.unit_amount, units) + tier.flat_amount))
        below = top
    return parts


def volume_tier(tiers: tuple[Tier, ...], quantity: int) -> Tier:
    """The one tier the whole quantity falls in (0 falls in the first)."""
    return next(tier for tier in tiers if tier.up_to is None or quantity <= tier.up_to)


@dataclass(frozen=True)
class UsagePart:
    """One line of how a quantity's amount adds up: ``units`` at ``unit_amount`` (minor
    units, possibly a fraction of one), plus a tier's ``flat_amount``, ``amount`` in all."""

    units: int
    unit_amount: Decimal
    flat_amount: int
    amount: int
    package_size: int | None = None  # a package price: ``units`` packages of this many


def amount_parts(terms: PriceTerms, quantity: int) -> list[UsagePart]:
    """How ``amount_for(terms, quantity)`` adds up, a line a tier entered (graduated), the
    one tier of the whole quantity (volume), or the units or packages: the lines' amounts
    sum to it exactly, each rounded as ``amount_for`` rounds it."""
    if terms.billing_scheme == BillingScheme.PER_UNIT:
        assert terms.unit_amount is not None
        units = packages(quantity, terms.package_size) if terms.package_size else quantity
        return [UsagePart(units, terms.unit_amount, 0, line(terms.unit_amount, units), terms.package_size)]
    if terms.tiers_mode == TiersMode.GRADUATED:
        return [UsagePart(units, tier.unit_amount, tier.flat_amount, amount)
                for tier, units, amount in graduated_parts(terms.tiers, quantity)]
    tier = volume_tier(terms.tiers, quantity)
    return [UsagePart(quantity, tier.unit_amount, tier.flat_amount, line(tier.unit_amount, quantity) + tier.flat_amount)]


def amount_for(terms: PriceTerms, quantity: int) -> int:
    """What ``quantity`` units of the price cost for one interval, in integer minor units."""
    _whole(quantity, "quantity", 0, MAX_QUANTITY)
    if terms.billing_scheme == BillingScheme.PER_UNIT:
        assert terms.unit_amount is not None
        units = packages(quantity, terms.package_size) if terms.package_size else quantity
        return line(terms.unit_amount, units)
    if terms.tiers_mode == TiersMode.GRADUATED:
        return sum(amount for _, _, amount in graduated_parts(terms.tiers, quantity))
    tier = volume_tier(terms.tiers, quantity)
    return line(tier.unit_amount, quantity) + tier.flat_amount


def seats_amount(quantity: int, *, unit: int | None = None, terms: PriceTerms | None = None) -> int:
    """A period's price of ``quantity`` seats, the one rule subscribing, a change of seats
    and a switch share: a price by tiers of seats (``terms``) its ``amount_for`` them, else
    ``unit`` (one seat's price) × the seats."""
    if terms is not None:
        return amount_for(terms, quantity)
    assert unit is not None
    return unit * quantity
