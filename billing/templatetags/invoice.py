"""Template filters of invoices and credit notes: ``{{ line.rate|vat_rate }}`` -> "22%",
"25.5%" (English), "25,5%" (Italian): the stored rate is a percent string, shown in the
active language's digits, never rounded."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from babel.numbers import format_decimal
from django import template
from django.utils import translation

from core.countries import country_name as _country_name
from core.localformat import active_locale

register = template.Library()


def vat_rate_text(rate: str | None) -> str:
    try:
        value = Decimal(str(rate or "0")).normalize()
    except InvalidOperation:
        return ""
    locale = active_locale()
    number = format_decimal(value, format="0.###", locale=locale) if locale else f"{value:f}"
    return f"{number}%"


@register.filter
def vat_rate(rate: str | None) -> str:
    return vat_rate_text(rate)


@register.filter
def with_credit_note(refunds: list | None) -> list:
    """``{% for f in receipt.Refunds|with_credit_note %}``: the refunds of an invoice that
    issued a credit note (each carries its number: no read of the credit notes)."""
    return [refund for refund in refunds or [] if getattr(refund, "CreditNoteNumber", None)]


def party_country(party: Any) -> str:
    """A party's country, named in the reader's language ("Italy", "Italia", "이탈리아"),
    or "" when its address ends with it already (in that language, English or as a code)."""
    code = getattr(party, "country", "") or ""
    if not code:
        return ""
    name = _country_name(code)
    lines = getattr(party, "address_lines", []) or []
    if lines and lines[-1].strip().casefold() in {name.casefold(), code.casefold(), english_name(code).casefold()}:
        return ""
    return name


def english_name(code: str) -> str:
    with translation.override("en"):
        return _country_name(code)


@register.filter
def country(party: Any) -> str:
    """``{{ doc.seller|country }}``: :func:`party_country`."""
    return party_country(party)
