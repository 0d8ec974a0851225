"""Small display helpers for the portal templates."""

from __future__ import annotations

from datetime import date, datetime

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from billing.batches import owed_amount
from billing.models import Subscription

register = template.Library()


@register.filter
def isodate(value: str | date | None) -> date | datetime | None:
    """Items store dates as ISO-8601 strings; templates format real dates (``|date``)."""
    if not value or isinstance(value, date):
        return value or None
    try:
        return datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
    except ValueError:
        return None


_STATUS = {
    "active": ("Active", "text-bg-success"),
    "past_due": ("Past due", "text-bg-danger"),
    "cancelled": ("Cancelled", "text-bg-secondary"),
    "paid": ("Paid", "text-bg-success"),
    "refunded": ("Refunded", "text-bg-warning"),
    "partially_refunded": ("Partially refunded", "text-bg-warning"),
}


@register.filter
def status_badge(status: str | None) -> SafeString:
    label, css = _STATUS.get(status or "", ((status or "").replace("_", " ").capitalize(), "text-bg-light"))
    return format_html('<span class="badge {}">{}</span>', css, label)


@register.filter
def next_charge(sub: Subscription) -> int | None:
    """What a live subscription's next payment will charge, in minor units: the period
    owed, prorated by day as the payment run charges it (the batch's own rule, not a copy;
    DESIGN-NOTES "Money rules")."""
    if not sub.NextPaymentDate:
        return None
    return owed_amount(sub)
