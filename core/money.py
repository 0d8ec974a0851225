"""Money: integer minor units <-> Decimal and text (DESIGN.md invariant 2: no floats).

The one place that knows how many decimals a currency has (its ISO-4217 exponent).
Python's stdlib has no exponent table, so the currencies whose exponent is not 2 are
listed here; every other currency gets the usual 2.
"""

from __future__ import annotations

from decimal import Decimal

from core import localformat

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


def to_decimal(amount: int, currency: str) -> Decimal:
    """Exact major units: 1299 USD -> Decimal('12.99'), never a float."""
    places = exponent(currency)
    return Decimal(int(amount)).scaleb(-places).quantize(Decimal(1).scaleb(-places))


def minor_units(amount: Decimal, currency: str) -> int:
    """12.99 USD -> 1299. Refuses more decimals than the currency has."""
    scaled = Decimal(amount).scaleb(exponent(currency))
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{currency.upper()} has {exponent(currency)} decimal places at most.")
    return int(scaled)


def decimal_string(amount: int, currency: str) -> str:
    """``999, "USD"`` -> ``"9.99"``; ``500, "JPY"`` -> ``"500"`` (CSV, form initial values)."""
    return format(to_decimal(amount, currency), "f")


def _grouped(amount: int, currency: str) -> tuple[str, str]:
    value = to_decimal(amount, currency)
    return ("-" if value < 0 else ""), format(abs(value), f",.{exponent(currency)}f")


def format_with_code(amount: int | None, currency: str) -> str:
    """With the currency code, for e-mails and staff pages: ``999, "usd"`` -> ``"9.99 USD"``;
    in the active language when it is not English (``"9,99 USD"`` in Italian)."""
    if amount is None or amount == "":
        return ""
    locale = localformat.active_locale()
    if locale is not None:
        code = (currency or "").upper()
        return localformat.currency(to_decimal(amount, code), code, exponent(code), locale, with_code=True)
    sign, number = _grouped(amount, currency)
    return f"{sign}{number} {(currency or '').upper()}"


def format_with_symbol(amount: int | None, currency: str) -> str:
    """For customers' pages: ``999, "USD"`` -> ``"$9.99"``; ``123456, "CHF"`` -> ``"CHF 1,234.56"``;
    in the active language's CLDR pattern when it is not English (``"9,99 €"``, ``"₩9,900"``)."""
    if amount is None or amount == "":
        return ""
    code = (currency or "").upper()
    locale = localformat.active_locale()
    if locale is not None:
        return localformat.currency(to_decimal(amount, code), code, exponent(code), locale)
    sign, number = _grouped(amount, code)
    symbol = CURRENCY_SYMBOLS.get(code)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{code} {number}"
