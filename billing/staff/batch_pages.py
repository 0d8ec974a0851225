"""What the batches will do and have done: the upcoming days and the recorded runs."""

from __future__ import annotations

from datetime import date

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import BatchKind, Subscription
from billing.rules.projection import coming_charges
from billing.rules.schedule import cadence_of
from billing.templatetags.staff_pages import staff_date
from core.money import exponent, format_with_code
from core.pages import today
from core.staff import render_staff

UPCOMING_DAYS = 30

# Each kind of batch run: its heading, and what its table says while it has no run.
KIND_TEXT = {
    BatchKind.PAYMENTS: (_("Payments"), _("No payments runs recorded yet.")),
    BatchKind.REMINDERS: (_("Reminders"), _("No reminders runs recorded yet.")),
}


def _charges_in_window(sub: Subscription) -> list[tuple[date, int]]:
    """A due item's payments as the run will take them: enough to cover the window (no
    period is shorter than its cadence's shortest: 28 days a month, 7 a week, 1 a day)."""
    shortest = cadence_of(sub).min_period_days
    return [(c.date, c.amount) for c in coming_charges(sub, UPCOMING_DAYS // shortest + 2, tax=access.tax_terms(sub))]


def upcoming(request: HttpRequest) -> HttpResponse:
    day = today()
    # Each due item's payments in the window, at what the payment run will charge each
    # (``rules.projection``: prorated, after the coupon's discount for that payment).
    days = access.get_upcoming(day, UPCOMING_DAYS, charges_of=_charges_in_window)
    currencies = sorted({c for d in days for c in d.totals})
    totals = {c: sum(d.totals.get(c, 0) for d in days) for c in currencies}
    rows = [{
        "day": d.day, "payments": d.payments, "reminders": d.reminders,
        "totals": [format_with_code(d.totals[c], c) if c in d.totals else "" for c in currencies],
    } for d in days]
    chart = {
        "labels": [staff_date(d.day) for d in days],
        "payments": [d.payments for d in days],
        "reminders": [d.reminders for d in days],
        # Minor units plus the exponent: the page scales them for display only.
        "amounts": {c: {"exponent": exponent(c), "values": [d.totals.get(c, 0) for d in days]}
                    for c in currencies},
        # The charts' words, in the page's language (static/staff/upcoming.js shows them).
        "text": {"payments": gettext("Payments due"), "reminders": gettext("Reminders due"),
                 "total": gettext("Total %(currency)s")},
    }
    return render_staff(request, "staff/upcoming.html", gettext("Upcoming: the next %(days)s days") % {"days": UPCOMING_DAYS}, {
        "rows": rows, "currencies": currencies, "chart": chart, "today": day,
        "sum_payments": sum(d.payments for d in days), "sum_reminders": sum(d.reminders for d in days),
        "sum_totals": [format_with_code(totals[c], c) for c in currencies],
        "sum_totals_text": ", ".join(format_with_code(totals[c], c) for c in currencies) or gettext("nothing"),
    })


def batch_runs(request: HttpRequest) -> HttpResponse:
    kinds = []
    now = access.utc_now().isoformat(timespec="microseconds")
    for kind in BatchKind:
        runs = access.list_batch_runs(kind)
        title, empty = KIND_TEXT.get(kind, (kind, ""))
        kinds.append({"kind": kind, "title": title, "empty": empty, "runs": [{
            "run": run,
            "status": run.status_at(now),
            "counts": count_rows(run.Counts or {}),
            "failures": [failure_text(f) for f in run.Failures or []],
        } for run in runs]})
    return render_staff(request, "staff/runs.html", gettext("Batch runs"), {"kinds": kinds})


def count_rows(counts: dict[str, int]) -> list[tuple[str, str]]:
    """A run's counts as staff read them: the money charged ("charged:EUR" holds minor
    units) as an amount in its currency, "charged: €2.99 EUR" and never "EUR: 299"."""
    rows = []
    for name, value in sorted(counts.items()):
        kind, _, currency = name.partition(":")
        if kind == "charged" and currency:
            rows.append((kind, format_with_code(int(value), currency)))  # named as the other counts
        else:
            rows.append((name, str(value)))
    return rows


def failure_text(failure: object) -> str:
    """A recorded failure as staff read it, "what: why" (a record holds a dict: its
    ``subject``, or an older record's ``sub_id``, and ``reason``), never a Python dict."""
    if not isinstance(failure, dict):
        return str(failure)
    what = failure.get("subject") or failure.get("sub_id") or ""
    why = failure.get("reason") or ", ".join(f"{k} {v}" for k, v in failure.items() if k not in ("subject", "sub_id"))
    return f"{what}: {why}" if what else str(why)
