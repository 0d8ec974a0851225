"""Revenue analytics (docs/ANALYTICS.md): MRR per currency, its movements, churn and
retention cohorts, computed from the subscriptions and their audit history.

A layer above ``access`` and ``rules``, below the staff pages and the commands: it never
imports actions, batches, views, staff or the API. ``history``, ``mrr``, ``retention``
and ``report`` are pure; ``reading`` reads the table. The staff page and
``manage.py revenue_report`` both call :func:`revenue_report`. ``rollups`` (pure) and
``rebuild`` make and check the kept daily figures and cohorts (``manage.py revenue_rebuild``);
``kept`` answers the API from them, ``kept_report`` the page and ``revenue_report``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

from django.conf import settings

from billing.access import list_products
from billing.access.revenue_rollups import Scope
from billing.analytics.filters import (
    INTERVALS,
    ReportFilter,
    filtered,
    filtered_money,
    filtered_usage,
    parse_price_interval,
)
from billing.analytics.kept import KEPT_KINDS, answerable, by_month, cohort_grid, kept_body, needed
from billing.analytics.kept_report import covers_report, kept_report, report_months
from billing.analytics.mrr import steps
from billing.analytics.periods import (
    BadRange,
    Interval,
    Period,
    month_of,
    parse_interval,
    requested_periods,
    shift_month,
)
from billing.analytics.reading import read_all
from billing.analytics.rebuild import (
    kept_cohorts_of,
    kept_days,
    kept_month_closes,
    kept_months,
    never_lived_in,
)
from billing.analytics.report import (
    MAX_MONTHS_SHOWN,
    MONTHS_SHOWN,
    BadMonth,
    RevenueReport,
    build_report,
    months_in_range,
    parse_month,
)
from billing.analytics.reporting import in_reporting_currency, movements_in_reporting_currency
from billing.analytics.rollups import DayFigures
from billing.analytics.series import metrics_body, parse_currency
from core.clock import billing_today


def revenue_report(month: str | None = None, *, today: date | None = None,
                   within: ReportFilter | None = None, since: str | None = None) -> RevenueReport:
    """The report on ``month`` (``YYYY-MM``; default: the month under way) as of today, its
    months from ``since`` (default: the twelve ending with it), of the subscriptions
    ``within`` a filter (by product, interval or currency, alone or together). Read from the
    kept items when ``revenue_rebuild`` keeps the view and every month it needs. ``BadMonth`` for a month that is not
    one, or is still to come, or a range that runs backwards or over ``MAX_MONTHS_SHOWN``."""
    today = today or billing_today(settings.BILLING_TIMEZONE)
    chosen = parse_month(month, today) if month else month_of(today)
    count = months_in_range(since, chosen, today) if since else MONTHS_SHOWN
    within = within or ReportFilter()
    report = _kept_report(chosen, today, count, within.scope) if within.kept else None
    if report is None:
        # not every day or cohort it needs is kept (no rebuild since, or a view no
        # subscription was ever in): every account's history, read now
        read = read_all()
        report = build_report(filtered(read.histories, within), today=today, month=chosen,
                              refunds=filtered_money(read.refunds, within),
                              disputes=filtered_money(read.disputes, within), months=count,
                              usage=filtered_usage(read.usage, read.histories, within))
    return with_reporting_currency(report)


def with_reporting_currency(report: RevenueReport) -> RevenueReport:
    """The report with its figures also in the reporting currency (``REVENUE_REPORTING_CURRENCY``),
    at the ECB's rates: the MRR and the month's usage at its close, each month's movements
    and usage at its own."""
    reporting = settings.REVENUE_REPORTING_CURRENCY
    usage = report.figures.usage if report.figures is not None else {}
    return replace(report, reporting=in_reporting_currency(report.mrr, reporting, report.close),
                   usage_reporting=in_reporting_currency(usage, reporting, report.close),
                   movements_reporting=tuple(movements_in_reporting_currency(report.months, reporting)),
                   usage_months_reporting=tuple(in_reporting_currency(row.usage, reporting, row.close)
                                                for row in report.months))


def _kept_report(month: str, today: date, count: int = MONTHS_SHOWN, scope: Scope | None = None) -> RevenueReport | None:
    """From the kept items (of ``scope``, or the whole business): one Query of the months
    (its ``count`` and the one before, 16 items each) and one of the cohorts, whatever the
    number of subscriptions."""
    first, last = report_months(month, today, count)
    months = kept_months(first, last, scope)
    if month not in months:  # nothing kept for it: the cohorts are not read
        if scope is not None and never_lived_in(scope) and covers_report(kept_months(first, last), month,
                                                                         today=today, count=count):
            # a view no subscription was ever in, the months kept by a rebuild: its figures
            # are the empty history's (one GetItem and one Query more, no account read)
            return replace(build_report([], today=today, month=month, months=count), source="kept")
        return None
    return kept_report(months, kept_cohorts_of(shift_month(first, 1), last, scope), today=today, month=month,
                       count=count)


METRICS = ("mrr", "movements", "cohorts")


def revenue_metrics(kind: str, *, from_month: str | None = None, to_month: str | None = None,
                    interval: str | None = None, currency: str | None = None,
                    product: str | None = None, price_interval: str | None = None,
                    today: date | None = None) -> dict[str, Any]:
    """The API's figures (``kind``: mrr, movements or cohorts) per period of ``interval``
    from ``from_month`` to ``to_month``, with ``"figures"``: ``"kept"`` (read from the
    rollups) or ``"recomputed"``. ``product`` (a SKU) and ``price_interval`` keep the
    subscriptions within them, as the page's filters do (kept alone or together, by month
    and by day). ``BadRange`` (naming the field) when the request
    cannot be answered: before anything is read, but for a product not in the catalog
    (after its one Query)."""
    today = today or billing_today(settings.BILLING_TIMEZONE)
    periods = requested_periods(from_month, to_month, interval, today)
    code = parse_currency(currency)
    chosen = parse_interval(interval)
    within = ReportFilter(product=(product or "").strip(), interval=parse_price_interval(price_interval))
    if within.product and within.product not in {p.SKU for p in list_products(include_retired=True)}:
        raise BadRange("product", "product is not in the catalog.")
    named = {"product": within.product or None, "price_interval": within.interval or None} if within else {}
    # The kept items (revenue_rebuild) when they hold every close the periods need: one
    # Query of the kept months for months, quarters and years, one a month of the kept days
    # for days (and one of the cohorts, kept by month: a quarter's or a year's adds its
    # months'), of the filtered view (a product, an interval, a currency, or some of them
    # together) or the whole business; else every account's history, as the page reads it.
    scope = within.scope
    if within.kept and kind in KEPT_KINDS and (kind != "cohorts" or chosen != Interval.DAY):
        kept = _kept_closes(periods, chosen, scope)
        if answerable(kind, kept, periods, chosen):
            grid = None
            if kind == "cohorts":
                rows = kept_cohorts_of(month_of(periods[0].first), month_of(periods[-1].close), scope)
                grid = cohort_grid(kept, rows, periods, code, chosen)
            if kind != "cohorts" or grid is not None:
                return {**kept_body(kind, kept, periods, chosen, code, grid), "figures": "kept", **named}
        elif (scope is not None and never_lived_in(scope)
              and answerable(kind, _kept_closes(periods, chosen), periods, chosen)):
            # a view no subscription was ever in (as the page answers it): the empty history's
            return {**metrics_body(kind, [], [], periods, chosen, code), "figures": "kept", **named}
    read = read_all(with_disputes=False)
    histories = filtered(read.histories, within)
    moved = steps(histories, periods[-1].close)
    usage = filtered_usage(read.usage, read.histories, within)
    return {**metrics_body(kind, histories, moved, periods, chosen, code, usage), "figures": "recomputed", **named}


def _kept_closes(periods: list[Period], chosen: Interval, scope: Scope | None = None) -> dict[date, DayFigures]:
    """The kept closes the periods need (of ``scope``, or the whole business): the months'
    (one Query) for months, quarters and years, the days' (one Query a month) for days."""
    if by_month(chosen):
        return kept_month_closes(*needed(periods), scope)
    return kept_days(*needed(periods), scope=scope)


__all__ = ["INTERVALS", "MAX_MONTHS_SHOWN", "METRICS", "BadMonth", "BadRange", "ReportFilter", "RevenueReport", "revenue_metrics",
           "revenue_report", "with_reporting_currency"]
