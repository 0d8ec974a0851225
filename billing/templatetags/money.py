"""Template filters for integer minor units (formats from core.money):

``{{ amount|money_symbol:currency }}`` -> "$9.99" (whatever a customer reads: pages,
e-mails, PDFs), ``{{ amount|money_code:currency }}`` -> "9.99 USD" (staff pages).
"""

from __future__ import annotations

from collections.abc import Callable

from django import template

from core.money import format_with_code, format_with_symbol

register = template.Library()


def _safe(formatter: Callable[[int | None, str], str], minor_units: int | None, currency: str) -> str:
    # A template shows nothing rather than fail the whole page on a malformed amount.
    try:
        return formatter(minor_units, currency)
    except (TypeError, ValueError, ArithmeticError):
        return ""


@register.filter
def money_symbol(minor_units: int | None, currency: str = "") -> str:
    return _safe(format_with_symbol, minor_units, currency)


@register.filter
def money_code(minor_units: int | None, currency: str = "") -> str:
    return _safe(format_with_code, minor_units, currency)
