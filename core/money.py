"""Money: integer minor units <-> Decimal and text (docs/TABLE.md, "Money in minor units": no floats).

The one place that knows how many decimals a currency has: its ISO-4217 exponent, from
the ``iso4217`` package (the standard's own table, kept current by its maintainers;
Babel's CLDR "digits" are a display convention and differ for IQD, CLF, UYW...).
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from iso4217 import Currency

from core import localformat

# For a code the table does not know (data stored before codes were checked).
DEFAULT_EXPONENT = 2


@lru_cache(maxsize=512)
def _iso_exponent(code: str) -> int | None:
    try:
        return Currency(code).exponent
    except ValueError:
        return None


def is_payable_currency(code: str) -> bool:
    """A current ISO-4217 code with minor units (not a fund, metal or testing code)."""
    return _iso_exponent((code or "").upper()) is not None


# Symbols only where they are unambiguous; every other currency shows its code.
CURRENCY_SYMBOLS: dict[str, str] = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def exponent(currency: str) -> int:
    found = _iso_exponent((currency or "").upper())
    return DEFAULT_EXPONENT if found is None else found


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
    """With the currency code, for staff pages and batch output (never a customer's: they
    read ``format_with_symbol``): ``999, "usd"`` -> ``"9.99 USD"``;
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
    """The one format of money a customer reads: their pages, e-mails (``core.mail.money_text``)
    and PDFs. ``999, "USD"`` -> ``"$9.99"``; ``123456, "CHF"`` -> ``"CHF 1,234.56"``;
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


def format_unit_price(amount: Decimal | int, currency: str) -> str:
    """A price per unit for customers' pages, which may be a fraction of the minor unit
    (a usage price): ``Decimal("0.2"), "USD"`` -> ``"$0.002"``; a whole number of minor
    units as ``format_with_symbol`` shows it (``1000, "USD"`` -> ``"$10.00"``)."""
    value = Decimal(amount)
    code = (currency or "").upper()
    if value == value.to_integral_value():
        return format_with_symbol(int(value), code)
    places = exponent(code)
    major = value.scaleb(-places)
    digits = max(places, -major.normalize().as_tuple().exponent)
    locale = localformat.active_locale()
    if locale is not None:
        return localformat.currency(major, code, digits, locale)
    number = format(abs(major), f",.{digits}f")
    sign = "-" if major < 0 else ""
    symbol = CURRENCY_SYMBOLS.get(code)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{code} {number}"


def format_quantity(count: int) -> str:
    """A count of units in a price's words, grouped as the active language groups it:
    ``1000`` -> ``"1,000"`` (``"1.000"`` in Italian)."""
    locale = localformat.active_locale()
    if locale is not None:
        from babel.numbers import format_decimal

        return format_decimal(count, locale=locale)
    return format(int(count), ",")
