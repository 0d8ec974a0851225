"""``{{ amount|money:currency }}``: integer minor units shown in their currency (billing.money)."""

from __future__ import annotations

from django import template

from billing.money import decimal_string, format_money_symbol

register = template.Library()

# The portal's names for the shared formatters.
format_money = format_money_symbol
__all__ = ["decimal_string", "format_money", "money"]


@register.filter(name="money")
def money(minor_units: int | None, currency: str = "") -> str:
    try:
        return format_money_symbol(minor_units, currency)
    except (TypeError, ValueError, ArithmeticError):
        return ""
