"""Display helpers for the staff pages (templates/staff/ and the staff views' messages): a
stored status shown as a label in the active language, and stored dates as the staff
pages show them. They live here, not in ``billing.staff``: the template tags sit below the
pages (the customer pages import ``invoice`` and ``portal``) and ``lifecycle``'s staff badge
uses them, so the staff pages import them from here and never the reverse."""

from __future__ import annotations

from datetime import date

from django import template
from django.utils.translation import gettext_lazy as _

from core import localformat

register = template.Library()

# The stored statuses of subscriptions, receipts, products, batch runs and disputes, as the staff
# pages show them (the portal's words where the portal shows the same status).
STATUS_LABELS = {
    "active": _("Active"),
    "past_due": _("Past due"),
    "cancelled": _("Cancelled"),
    "paid": _("Paid"),
    "refunded": _("Refunded"),
    "partially_refunded": _("Partially refunded"),
    "retired": _("Retired"),
    "running": _("Running"),
    "completed": _("Completed"),
    "failed": _("Failed"),
    "interrupted": _("Interrupted"),
    "abandoned": _("Abandoned"),
    # a dispute's (Stripe's words): open, then closed
    "warning_needs_response": _("Inquiry: needs response"),
    "warning_under_review": _("Inquiry: under review"),
    "needs_response": _("Needs response"),
    "under_review": _("Under review"),
    "won": _("Won"),
    "lost": _("Lost"),
    "warning_closed": _("Inquiry closed"),
}


def status_label(value: str | None) -> str:
    """A stored status in the active language. English keeps the stored word ("past_due"),
    as the staff pages always showed it and staff meet it in logs, exports and the table
    (the same rule as localformat's "English keeps rpay's own formats"); an unknown status
    is shown as it is stored."""
    stored = str(value or "")
    label = STATUS_LABELS.get(stored)
    if label is None or localformat.active_locale() is None:
        return stored
    return str(label)


def staff_date(value: str | date | None) -> str:
    """A stored date (or timestamp, with its time) as staff read it: ISO in English
    ("2026-11-30", "2026-11-30 06:00"), CLDR's medium style in another language
    ("30 nov 2026", "2026. 11. 30."); a value that is no date as it is."""
    day = localformat.parse_date(value)
    if day is None:
        return str(value or "")
    with_time = isinstance(value, str) and "T" in value
    return localformat.local_date(day, "Y-m-d H:i" if with_time else "Y-m-d")



# ``{{ sub.Status|staff_status }}``: "past_due" in English, "Scaduto", "연체", "逾期" in another language.
register.filter("staff_status", status_label)
# ``{{ sub.NextPaymentDate|staff_date }}``: "2026-11-30" in English, "30 nov 2026" in Italian.
register.filter("staff_date", staff_date)


@register.filter
def staff_day(value: date | None) -> str:
    """A day with its weekday: "Mon 2026-11-30" in English, "lun 30 nov 2026" in Italian."""
    return localformat.local_date(value, "D Y-m-d")


@register.filter
def lines_of(mapping: dict, key: str) -> list:
    """``{{ price_lines|lines_of:sub.sub_id }}``: a page's list for one row ([] if none)."""
    return mapping.get(key, []) if mapping else []
