"""Minor units <-> decimal text for staff pages, with Decimal only (no floats)."""

from __future__ import annotations

from decimal import Decimal

# ISO 4217 currencies without the usual two decimals; everything else has two.
EXPONENTS = {"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "BHD": 3, "KWD": 3, "JOD": 3, "OMR": 3, "TND": 3}


def exponent(currency: str) -> int:
    return EXPONENTS.get(currency.upper(), 2)


def minor_units(amount: Decimal, currency: str) -> int:
    """12.99 USD -> 1299. Refuses more decimals than the currency has."""
    scaled = Decimal(amount).scaleb(exponent(currency))
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{currency.upper()} has {exponent(currency)} decimal places at most.")
    return int(scaled)


def to_decimal(amount: int, currency: str) -> Decimal:
    return Decimal(int(amount)).scaleb(-exponent(currency))


def format_money(amount: int | None, currency: str) -> str:
    """1299, USD -> '12.99 USD'."""
    if amount is None:
        return ""
    places = exponent(currency)
    value = to_decimal(amount, currency)
    return f"{value:,.{places}f} {currency.upper()}"
