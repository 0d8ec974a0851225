"""``{{ amount|money:currency }}``: integer minor units shown in their currency.

Amounts are integers of minor units (DESIGN.md invariant 2); how many decimals a
currency has is its ISO-4217 exponent. Python's stdlib has no exponent table, so the
common ones are listed here and every other currency gets the usual 2.
"""

from __future__ import annotations

from decimal import Decimal

from django import template

register = template.Library()

# ISO-4217 minor-unit exponents that are not 2.
CURRENCY_EXPONENTS: dict[str, int] = {
    "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
    "PYG": 0, "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
    "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}
DEFAULT_EXPONENT = 2

# Symbols only where they are unambiguous; every other currency shows its code.
CURRENCY_SYMBOLS: dict[str, str] = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def exponent(currency: str) -> int:
    return CURRENCY_EXPONENTS.get((currency or "").upper(), DEFAULT_EXPONENT)


def to_decimal(minor_units: int, currency: str) -> Decimal:
    """Exact major units: Decimal scaled by the exponent, never a float."""
    places = exponent(currency)
    return Decimal(int(minor_units)).scaleb(-places).quantize(Decimal(1).scaleb(-places))


def decimal_string(minor_units: int, currency: str) -> str:
    """``999, "USD"`` -> ``"9.99"``; ``500, "JPY"`` -> ``"500"`` (CSV, machine-readable)."""
    return format(to_decimal(minor_units, currency), "f")


def format_money(minor_units: int | None, currency: str) -> str:
    """``999, "USD"`` -> ``"$9.99"``; ``123456, "CHF"`` -> ``"CHF 1,234.56"``."""
    if minor_units is None or minor_units == "":
        return ""
    code = (currency or "").upper()
    value = to_decimal(minor_units, code)
    sign = "-" if value < 0 else ""
    number = format(abs(value), f",.{exponent(code)}f")
    symbol = CURRENCY_SYMBOLS.get(code)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{code} {number}"


@register.filter(name="money")
def money(minor_units: int | None, currency: str = "") -> str:
    try:
        return format_money(minor_units, currency)
    except (TypeError, ValueError, ArithmeticError):
        return ""
