"""Template filters of invoices and credit notes: ``{{ line.rate|vat_rate }}`` -> "22%",
"25.5%" (English), "25,5%" (Italian): the stored rate is a percent string, shown in the
active language's digits, never rounded."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from babel.numbers import format_decimal
from django import template

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


@register.filter
def country(code: str | None) -> str:
    """A party's country, named in the page's language ("Italy", "Italia", "이탈리아")."""
    return _country_name(code)
