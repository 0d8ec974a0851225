"""What the batches will do and have done: the upcoming days and the recorded runs."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from billing import access
from billing.models import BatchKind
from billing.money import exponent, format_with_code
from billing.pages import today

from .common import render_staff

UPCOMING_DAYS = 30


def upcoming(request: HttpRequest) -> HttpResponse:
    day = today()
    days = access.get_upcoming(day, UPCOMING_DAYS)
    currencies = sorted({c for d in days for c in d.totals})
    totals = {c: sum(d.totals.get(c, 0) for d in days) for c in currencies}
    rows = [{
        "day": d.day, "payments": d.payments, "reminders": d.reminders,
        "totals": [format_with_code(d.totals[c], c) if c in d.totals else "" for c in currencies],
    } for d in days]
    chart = {
        "labels": [d.day.isoformat() for d in days],
        "payments": [d.payments for d in days],
        "reminders": [d.reminders for d in days],
        # Minor units plus the exponent: the page scales them for display only.
        "amounts": {c: {"exponent": exponent(c), "values": [d.totals.get(c, 0) for d in days]}
                    for c in currencies},
    }
    return render_staff(request, "staff/upcoming.html", f"Upcoming: the next {UPCOMING_DAYS} days", {
        "rows": rows, "currencies": currencies, "chart": chart, "today": day,
        "sum_payments": sum(d.payments for d in days), "sum_reminders": sum(d.reminders for d in days),
        "sum_totals": [format_with_code(totals[c], c) for c in currencies],
    })


def batch_runs(request: HttpRequest) -> HttpResponse:
    kinds = []
    now = access.utc_now().isoformat(timespec="microseconds")
    for kind in BatchKind:
        runs = access.list_batch_runs(kind)
        kinds.append({"kind": kind, "runs": [{
            "run": run,
            "status": run.status_at(now),
            "counts": sorted((run.Counts or {}).items()),
            "failures": run.Failures or [],
        } for run in runs]})
    return render_staff(request, "staff/runs.html", "Batch runs", {"kinds": kinds})
