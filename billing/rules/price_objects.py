"""A stored price (``models.Price``) as the models' terms (billing/rules/pricing.py) and as
the API's object, in Stripe's names (docs/API.md, "Prices"). Pure: no I/O."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from billing.models import Price, PriceStatus, PriceTierMap
from billing.rules.price_words import price_words
from billing.rules.pricing import BillingScheme, PriceTerms, Tier
from billing.rules.tax import tax_behavior_word

PRICE_ID_PREFIX = "price_"
# The price a product made before prices existed has: never stored, derived from the
# product (its monthly PaymentAmount), so it always says what subscribing charges.
DEFAULT_PRICE_PREFIX = "price_default_"


def default_price_id(sku: str) -> str:
    return f"{DEFAULT_PRICE_PREFIX}{sku}"


def price_id_for(sku: str, suffix: str) -> str:
    """``price_<SKU>_<random>``: the SKU in the id, so the price is one GetItem by its id."""
    return f"{PRICE_ID_PREFIX}{sku}_{suffix}"


def sku_of_price_id(price_id: str) -> tuple[str, bool] | None:
    """The SKU a price id names and whether it is the product's default price; None when
    the text cannot be a price id."""
    if not isinstance(price_id, str):
        return None
    if price_id.startswith(DEFAULT_PRICE_PREFIX):
        sku = price_id[len(DEFAULT_PRICE_PREFIX):]
        return (sku, True) if sku else None
    if not price_id.startswith(PRICE_ID_PREFIX):
        return None
    sku, _, suffix = price_id[len(PRICE_ID_PREFIX):].rpartition("_")
    return (sku, False) if sku and suffix else None


def unit_amount_of(price: Price) -> Decimal | None:
    if price.UnitAmountDecimal is not None:
        return Decimal(price.UnitAmountDecimal)
    return None if price.UnitAmount is None else Decimal(int(price.UnitAmount))


def tiers_of(price: Price) -> tuple[Tier, ...]:
    return tuple(Tier(None if t.UpTo is None else int(t.UpTo), Decimal(t.UnitAmount), int(t.FlatAmount or 0))
                 for t in price.Tiers or ())


def tier_maps(tiers: tuple[Tier, ...]) -> list[PriceTierMap]:
    return [PriceTierMap(UpTo=t.up_to, UnitAmount=_decimal_text(t.unit_amount), FlatAmount=t.flat_amount)
            for t in tiers]


def _decimal_text(amount: Decimal) -> str:
    """``Decimal("0.20")`` -> ``"0.2"``, ``Decimal("1E+3")`` -> ``"1000"``: plain, no exponent."""
    text = format(amount.normalize(), "f")
    return text if text != "-0" else "0"


def terms_of(price: Price) -> PriceTerms:
    """The price's model and amounts, checked as when it was made."""
    tiered = price.BillingScheme == BillingScheme.TIERED
    return PriceTerms(
        price.Currency, price.BillingScheme, unit_amount=None if tiered else unit_amount_of(price),
        tiers_mode=price.TiersMode if tiered else None, tiers=tiers_of(price) if tiered else (),
        package_size=None if price.PackageSize is None else int(price.PackageSize),
        interval=price.Interval, interval_count=int(price.IntervalCount or 1))


def price_words_of(price: Price) -> str:
    """A catalog price in words (``price_words``, in the active language). A metered price
    by the unit without a unit label of its own names "a unit", so the price of its usage
    never reads as a flat fee ("$0.10 a unit a month", not "$0.10 a month")."""
    terms = terms_of(price)
    per_unit = terms.billing_scheme == BillingScheme.PER_UNIT and not terms.package_size
    return price_words(terms, price.UnitLabel or (_("unit") if price.Meter and per_unit else None))


def _number(value: Any) -> int | None:
    return None if value is None else int(value)


def price_object(price: Price) -> dict[str, Any]:
    """The API's price: Stripe's fields (``recurring`` nests the interval, ``tiers``'
    ``up_to`` is null for the last (``"inf"`` when given), ``transform_quantity`` is the package)."""
    tiered = price.BillingScheme == BillingScheme.TIERED
    unit = None if tiered else unit_amount_of(price)
    return {
        "object": "price",
        "id": price.PriceId,
        "product": price.SKU,
        "active": price.Status == PriceStatus.ACTIVE,
        "currency": price.Currency,
        "nickname": price.Nickname,
        "billing_scheme": price.BillingScheme,
        "unit_amount": None if unit is None or unit != unit.to_integral_value() else int(unit),
        "unit_amount_decimal": None if unit is None else _decimal_text(unit),
        "recurring": {"interval": price.Interval, "interval_count": int(price.IntervalCount or 1),
                      "usage_type": "metered" if price.Meter else "licensed", "meter": price.Meter,
                      "trial_period_days": _number(price.TrialDays)},
        "tiers_mode": price.TiersMode if tiered else None,
        "tiers": [{"up_to": t.up_to,
                   "unit_amount": int(t.unit_amount) if t.unit_amount == t.unit_amount.to_integral_value() else None,
                   "unit_amount_decimal": _decimal_text(t.unit_amount), "flat_amount": t.flat_amount}
                  for t in tiers_of(price)] if tiered else None,
        "transform_quantity": {"divide_by": int(price.PackageSize), "round": "up"} if price.PackageSize else None,
        "tax_behavior": tax_behavior_word(price.TaxBehavior),
        "meter": price.Meter,
        "unit_label": price.UnitLabel,
        "quantity": {"minimum": _number(price.MinQuantity), "maximum": _number(price.MaxQuantity)},
        "default": price.PriceId.startswith(DEFAULT_PRICE_PREFIX),
        "created": price.CreatedDate,
    }
