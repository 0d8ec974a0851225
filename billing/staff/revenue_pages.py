"""The staff Revenue page (finance role, as the tax report): MRR per currency, the
movements of twelve months (or a range of up to 36), the month's churn, the cohort grid and a bar chart of MRR per
month, from ``billing.analytics.revenue_report`` (which ``manage.py revenue_report``
prints too): from the items ``revenue_rebuild`` keeps when they cover the month (two
Queries, and the catalog's for the product filter's list), else, or filtered by product,
price interval or currency, recomputed from every account's history (docs/ANALYTICS.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.analytics import (
    INTERVALS,
    MAX_MONTHS_SHOWN,
    BadMonth,
    ReportFilter,
    RevenueReport,
    revenue_report,
)
from billing.analytics.mrr import Excluded, Movements
from billing.analytics.report import months_ending
from billing.analytics.retention import month_of
from billing.models import Product
from billing.staff.price_forms import INTERVALS as INTERVAL_CHOICES
from billing.staff.revenue_csv import csv_response
from core.clock import billing_today
from core.staff import render_staff

MONTHS_OFFERED = 24
CURRENCY = re.compile(r"[A-Z]{3}")
CHART_HEIGHT = 120  # the bars' area, in the SVG's units
BAR_WIDTH = 20
BAR_GAP = 6
EXCLUDED_LABELS = {Excluded.TRIAL: _("In a free trial"), Excluded.PAUSED: _("Paused")}


# The movements' colours (the legend names them): growth in greens and blue, losses in
# oranges, what was kept from the opening in grey. Presentation attributes, not inline
# styles: the Content-Security-Policy allows no inline style.
KINDS = (
    ("kept", _("Kept from the opening"), "#9aa5ad"),
    ("new", pgettext_lazy("MRR movement", "New"), "#2e7d32"),
    ("expansion", _("Expansion"), "#66bb6a"),
    ("reactivation", _("Reactivation"), "#1565c0"),
    ("contraction", _("Contraction"), "#ef6c00"),
    ("churn", _("Churn"), "#c62828"),
)
HEAT_STEPS = 10


@dataclass(frozen=True)
class Segment:
    kind: str
    label: str
    colour: str
    amount: int
    y: int
    height: int


@dataclass(frozen=True)
class Bar:
    month: str
    x: int
    closing: int
    segments: list[Segment]


@dataclass(frozen=True)
class Chart:
    currency: str
    bars: list[Bar]
    width: int
    height: int
    axis: int  # the y of zero: growth above it, losses below


def _parts(m: Movements | None) -> dict[str, int]:
    if m is None:
        return {kind: 0 for kind, _, _ in KINDS}
    return {"kept": max(0, m.opening - m.contraction - m.churn), "new": m.new, "expansion": m.expansion,
            "reactivation": m.reactivation, "contraction": m.contraction, "churn": m.churn}


def charts(report: RevenueReport) -> list[Chart]:
    """One stacked bar chart per currency, a bar a month: above the axis what the month
    closed with (kept from the opening, then new, expansion and reactivation stacked on it),
    below it what it lost (contraction, churn); the scale shared by both sides."""
    found = []
    for currency in report.currencies:
        months = [(row.month, _parts(m := row.by_currency.get(currency)), m.closing if m else 0)
                  for row in report.months]
        up = max((sum(p[k] for k in ("kept", "new", "expansion", "reactivation")) for _, p, _ in months), default=0)
        down = max((p["contraction"] + p["churn"] for _, p, _ in months), default=0)
        scale = CHART_HEIGHT / ((up + down) or 1)
        axis = round(up * scale)
        bars = []
        for n, (month, parts, closing) in enumerate(months):
            segments, top, bottom = [], axis, axis
            for kind, label, colour in KINDS:
                height = round(parts[kind] * scale)
                if kind in ("contraction", "churn"):
                    segments.append(Segment(kind, str(label), colour, parts[kind], bottom, height))
                    bottom += height
                else:
                    top -= height
                    segments.append(Segment(kind, str(label), colour, parts[kind], top, height))
            bars.append(Bar(month, n * (BAR_WIDTH + BAR_GAP), closing, [s for s in segments if s.amount]))
        found.append(Chart(currency, bars, len(months) * (BAR_WIDTH + BAR_GAP), CHART_HEIGHT, axis))
    return found


def usage_month_rows(report: RevenueReport) -> dict[str, object] | None:
    """The table of each month's usage revenue per currency and in the reporting currency;
    None when no month shown has any."""
    currencies = report.usage_currencies
    if not currencies:
        return None
    return {"currencies": currencies, "rows": [
        (row, [(row.usage.get(c, 0), c) for c in currencies], conv)
        for row, conv in zip(report.months, report.usage_months_reporting, strict=True)]}


def heat(share: Decimal | None) -> str:
    """The cohort cell's class: its share in tenths (heat-0 .. heat-10), shaded by revenue.css."""
    if share is None:
        return ""
    return f"heat-{min(HEAT_STEPS, max(0, int(share) // HEAT_STEPS))}"


def _filter_of(request: HttpRequest, products: list[Product]) -> tuple[ReportFilter, list[str]]:
    """The filters the URL asks for, and what is wrong with them (each a sentence)."""
    product = request.GET.get("product", "").strip()
    interval = request.GET.get("interval", "").strip()
    currency = request.GET.get("currency", "").strip().upper()
    errors = []
    if product and product not in {p.SKU for p in products}:
        errors.append(gettext("That product is not in the catalog: choose one from the list."))
    if interval and interval not in INTERVALS:
        errors.append(gettext("That is not a price interval: choose one from the list."))
    if currency and not CURRENCY.fullmatch(currency):
        errors.append(gettext("That is not a currency code: three letters, such as EUR."))
    return ReportFilter(product, interval, currency), errors


def revenue(request: HttpRequest) -> HttpResponse:
    today = billing_today(settings.BILLING_TIMEZONE)
    choices = list(reversed(months_ending(month_of(today), MONTHS_OFFERED)))
    title = gettext("Revenue")
    products = access.list_products(include_retired=True)  # the filter's choices: one Query
    within, errors = _filter_of(request, products)
    since = request.GET.get("from") or None
    filters = {"products": products, "intervals": INTERVAL_CHOICES,
               "currencies": sorted({p.Currency for p in products} | ({within.currency} - {""})),
               "within": within, "since": since}
    try:
        if errors:
            raise BadMonth(errors[0])
        report = revenue_report(request.GET.get("month") or None, today=today, within=within, since=since)
    except BadMonth:  # a typo in the URL: say so, read nothing more
        if since and not errors:
            errors.append(gettext("Choose a first month before the last, at most %(count)s months in all.")
                          % {"count": MAX_MONTHS_SHOWN})
        return render_staff(request, "staff/revenue.html", title, {"choices": choices, "report": None,
                                                                    "error": True, "errors": errors, **filters},
                            status=400)
    if request.GET.get("format") == "csv":  # one table of the page, by the name its link carries
        download = csv_response(report, request.GET.get("table", ""))
        if download is None:
            raise Http404("no such table")
        return download
    query = urlencode({"month": report.month, **{k: v for k, v in (("from", since), ("product", within.product),
                                                                   ("interval", within.interval),
                                                                   ("currency", within.currency)) if v}})
    return render_staff(request, "staff/revenue.html", title, {
        "choices": choices if report.month in choices else [report.month, *choices],
        "report": report,
        "query": query,
        **filters,
        "excluded": [(EXCLUDED_LABELS[reason], count) for reason, count in report.excluded.items()],
        "tables": [
            {"currency": currency,
             "rows": [(row, row.by_currency[currency]) for row in report.months if currency in row.by_currency]}
            for currency in report.currencies
        ],
        # all currencies' movements in the reporting currency: only when it adds something
        # (another currency than it is in the months)
        "movements_reporting": report.movements_reporting if report.reporting is not None and any(
            c != report.reporting.reporting for c in report.currencies) else (),
        "usage_months": usage_month_rows(report),
        "charts": charts(report),
        "cohort_offsets": range(len(report.cohorts)),
        "cohort_cells": [(c, [(share, heat(share)) for share in c.shares]) for c in report.cohorts],
        "mrr_cohort_tables": [
            {"currency": currency, "cells": [(c, [(share, heat(share)) for share in c.mrr_shares]) for c in grid]}
            for currency, grid in report.mrr_cohorts.items() if any(c.size for c in grid)],
        "legend": [(label, colour) for _, label, colour in KINDS],
    })
