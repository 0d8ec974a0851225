"""Each table of the staff Revenue page as CSV (``?format=csv&table=<name>``, the page's own
URL, so the same roles): the figures the table shows, amounts as plain decimals beside
their currency code, rates in percent. Column names are English and fixed (a spreadsheet's
formulas outlive the staff member's language)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from decimal import Decimal

from django.http import HttpResponse

from billing.analytics import RevenueReport
from core.money import decimal_string

Rows = Iterator[list[str]]
MOVEMENT_COLUMNS = ("opening", "new", "expansion", "reactivation", "contraction", "churn", "closing")


def _rate(value: Decimal | None) -> str:
    return "" if value is None else str(value)


def mrr_rows(report: RevenueReport) -> Rows:
    yield ["currency", "mrr"]
    for currency, amount in report.mrr.items():
        yield [currency, decimal_string(amount, currency)]


def reporting_rows(report: RevenueReport, *, usage: bool = False) -> Rows:
    """The MRR (or, ``usage``, the month's usage revenue) in the reporting currency."""
    conv = report.usage_reporting if usage else report.reporting
    if conv is None:
        return
    yield ["currency", "usage_revenue" if usage else "mrr", f"ecb_rate_per_{conv.reporting}", "rate_date",
           f"in_{conv.reporting}"]
    for line in conv.lines:
        yield [line.currency, decimal_string(line.amount, line.currency), "" if line.rate is None else str(line.rate),
               (line.published.isoformat() + ("*" if line.provisional else "")) if line.published else "",
               "" if line.converted is None else decimal_string(line.converted, conv.reporting)]
    yield ["Total", "", "", "", decimal_string(conv.total, conv.reporting)]


def movement_rows(report: RevenueReport, currency: str) -> Rows:
    yield ["month", "currency", *MOVEMENT_COLUMNS]
    for row in report.months:
        if (m := row.by_currency.get(currency)) is not None:
            yield [row.month, currency, *(decimal_string(getattr(m, c), currency) for c in MOVEMENT_COLUMNS)]


def movements_reporting_rows(report: RevenueReport) -> Rows:
    """Each month's movements in the reporting currency, the rates' change (``fx``) apart."""
    reporting = report.reporting.reporting if report.reporting else ""
    columns = ("opening", "new", "expansion", "reactivation", "contraction", "churn", "fx", "closing")
    yield ["month", *(f"{c}_{reporting}" for c in columns), "left_out"]
    for m in report.movements_reporting:
        yield [m.month, *(decimal_string(getattr(m, c), reporting) for c in columns), " ".join(m.unconverted)]


def usage_months_rows(report: RevenueReport) -> Rows:
    """Each month's usage revenue per currency, and their total in the reporting currency at
    the rates of the month's close."""
    currencies = report.usage_currencies
    reporting = report.reporting.reporting if report.reporting else ""
    yield ["month", *currencies, f"total_{reporting}", "left_out"]
    for row, conv in zip(report.months, report.usage_months_reporting, strict=True):
        yield [row.month, *(decimal_string(row.usage.get(c, 0), c) for c in currencies),
               decimal_string(conv.total, conv.reporting), " ".join(conv.unconverted)]


def revenue_churn_rows(report: RevenueReport) -> Rows:
    yield ["currency", "opening", "gross_revenue_churn_percent", "net_revenue_churn_percent"]
    for r in report.revenue_churn:
        yield [r.currency, decimal_string(r.opening, r.currency), _rate(r.gross_rate), _rate(r.net_rate)]


def figure_rows(report: RevenueReport) -> Rows:
    yield ["currency", "mrr", "arr", "usage_revenue", "paying_customers", "arpa", "net_revenue_retention_percent",
           "gross_revenue_retention_percent", "refunds", "refunded", "disputes", "disputed"]
    for f in report.figures.by_currency if report.figures else ():
        c = f.currency
        yield [c, decimal_string(f.mrr, c), decimal_string(f.arr, c), decimal_string(f.usage, c), str(f.paying),
               "" if f.arpa is None else decimal_string(f.arpa, c), _rate(f.net_retention), _rate(f.gross_retention),
               str(f.refunds), decimal_string(f.refunded, c), str(f.disputes), decimal_string(f.disputed, c)]


def cohort_rows(report: RevenueReport) -> Rows:
    yield ["cohort", "customers", *(f"+{n}" for n in range(len(report.cohorts)))]
    for c in report.cohorts:
        yield [c.month, str(c.size), *(_rate(s) for s in c.shares)]


def mrr_cohort_rows(report: RevenueReport, currency: str) -> Rows:
    """A currency's cohorts: their MRR at their own month's close, and at each close since
    as a share of it (net MRR retention, percent)."""
    grid = report.mrr_cohorts.get(currency, [])
    yield ["cohort", "customers", f"mrr_{currency}", *(f"+{n}" for n in range(len(grid)))]
    for c in grid:
        yield [c.month, str(c.size), decimal_string((c.mrr or (0,))[0], currency), *(_rate(s) for s in c.mrr_shares)]


def tables(report: RevenueReport) -> dict[str, Callable[[], Rows]]:
    """The page's tables by the name their link carries."""
    found: dict[str, Callable[[], Rows]] = {"mrr": lambda: mrr_rows(report),
                                            "mrr-reporting": lambda: reporting_rows(report)}
    for currency in report.currencies:
        found[f"movements-{currency}"] = lambda currency=currency: movement_rows(report, currency)
    found["reporting-movements"] = lambda: movements_reporting_rows(report)
    found["revenue-churn"] = lambda: revenue_churn_rows(report)
    found["figures"] = lambda: figure_rows(report)
    found["usage-reporting"] = lambda: reporting_rows(report, usage=True)
    found["usage-months"] = lambda: usage_months_rows(report)
    found["cohorts"] = lambda: cohort_rows(report)
    for currency in report.mrr_cohorts:
        found[f"mrr-cohorts-{currency}"] = lambda currency=currency: mrr_cohort_rows(report, currency)
    return found


def csv_response(report: RevenueReport, name: str) -> HttpResponse | None:
    """The table ``name`` as a CSV download; None when the page has no such table."""
    make = tables(report).get(name)
    if make is None:
        return None
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(make())
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="revenue-{name}-{report.month}.csv"'
    return response
