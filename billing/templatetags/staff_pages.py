"""Display helpers for the staff pages (templates/staff/): a stored status shown as a
label in the active language, and stored dates as the staff pages show them."""

from __future__ import annotations

from datetime import date

from django import template

from billing.staff.common import staff_date, status_label
from core import localformat

register = template.Library()

# ``{{ sub.Status|staff_status }}``: "past_due" in English, "Scaduto", "연체", "逾期" in another language.
register.filter("staff_status", status_label)
# ``{{ sub.NextPaymentDate|staff_date }}``: "2026-11-30" in English, "30 nov 2026" in Italian.
register.filter("staff_date", staff_date)


@register.filter
def staff_day(value: date | None) -> str:
    """A day with its weekday: "Mon 2026-11-30" in English, "lun 30 nov 2026" in Italian."""
    return localformat.local_date(value, "D Y-m-d")
