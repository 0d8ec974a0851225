from __future__ import annotations

from django import template

from billing.money import format_money

register = template.Library()


@register.simple_tag
def money(amount: int | None, currency: str) -> str:
    return format_money(amount, currency)
