"""The staff Revenue page (finance role, as the tax report): MRR per currency, the
movements of twelve months, the month's churn, the cohort grid and a bar chart of MRR per
month, from ``billing.analytics.revenue_report`` (which ``manage.py revenue_report``
prints too). Its read grows with the number of accounts (docs/ANALYTICS.md)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing.analytics import BadMonth, RevenueReport, revenue_report
from billing.analytics.mrr import Excluded
from billing.analytics.report import months_ending
from billing.analytics.retention import month_of
from billing.staff.revenue_csv import csv_response
from core.clock import billing_today
from core.staff import render_staff

MONTHS_OFFERED = 24
CHART_HEIGHT = 120  # the bars' area, in the SVG's units
BAR_WIDTH = 20
BAR_GAP = 6
EXCLUDED_LABELS = {Excluded.TRIAL: _("In a free trial"), Excluded.PAUSED: _("Paused")}


@dataclass(frozen=True)
class Bar:
    month: str
    amount: int
    x: int
    y: int
    height: int


@dataclass(frozen=True)
class Chart:
    currency: str
    bars: list[Bar]
    width: int
    height: int


def charts(report: RevenueReport) -> list[Chart]:
    """One bar chart per currency: each month's closing MRR, the tallest bar full height."""
    found = []
    for currency in report.currencies:
        amounts = [(row.month, m.closing if (m := row.by_currency.get(currency)) else 0) for row in report.months]
        top = max((a for _, a in amounts), default=0) or 1
        bars = []
        for n, (month, amount) in enumerate(amounts):
            height = round(CHART_HEIGHT * amount / top)
            bars.append(Bar(month, amount, n * (BAR_WIDTH + BAR_GAP), CHART_HEIGHT - height, height))
        found.append(Chart(currency, bars, len(amounts) * (BAR_WIDTH + BAR_GAP), CHART_HEIGHT))
    return found


def revenue(request: HttpRequest) -> HttpResponse:
    today = billing_today(settings.BILLING_TIMEZONE)
    choices = list(reversed(months_ending(month_of(today), MONTHS_OFFERED)))
    title = gettext("Revenue")
    try:
        report = revenue_report(request.GET.get("month") or None, today=today)
    except BadMonth:  # a typo in the URL: say so, read nothing
        return render_staff(request, "staff/revenue.html", title, {"choices": choices, "report": None,
                                                                    "error": True}, status=400)
    if request.GET.get("format") == "csv":  # one table of the page, by the name its link carries
        download = csv_response(report, request.GET.get("table", ""))
        if download is None:
            raise Http404("no such table")
        return download
    return render_staff(request, "staff/revenue.html", title, {
        "choices": choices if report.month in choices else [report.month, *choices],
        "report": report,
        "excluded": [(EXCLUDED_LABELS[reason], count) for reason, count in report.excluded.items()],
        "tables": [
            {"currency": currency,
             "rows": [(row, row.by_currency[currency]) for row in report.months if currency in row.by_currency]}
            for currency in report.currencies
        ],
        "charts": charts(report),
        "cohort_offsets": range(len(report.cohorts)),
    })
