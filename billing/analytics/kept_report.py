"""The revenue report made from the kept items (docs/ANALYTICS.md, "Kept figures"): the
same ``RevenueReport`` ``report.build_report`` makes from every account's history, to the
minor unit, when ``revenue_rebuild`` has kept each of its months (and the one before, for
the opening), closing where the report closes them, and the cohorts of its months. Pure:
the reading is ``rebuild.kept_months``' and ``rebuild.kept_cohorts_of``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from billing.access.revenue_rollups import CohortRow
from billing.analytics.cohort_table import kept_cohorts
from billing.analytics.figures import Figures, Ratio, currency_rows
from billing.analytics.mrr import ONE_DAY, Excluded, Movements
from billing.analytics.periods import month_of
from billing.analytics.report import MONTHS_SHOWN, MonthRow, RevenueReport, shown_months
from billing.analytics.retention import CustomerChurn, revenue_churn
from billing.analytics.rollups import DayFigures


def report_months(month: str, today: date, count: int = MONTHS_SHOWN) -> tuple[str, str]:
    """The months a report on ``month`` needs kept: from the one before its first (its opening)."""
    shown = shown_months(month, today, count)
    return month_of(shown[0].first - ONE_DAY), shown[-1].label


def month_movements(opening: DayFigures, month: DayFigures) -> dict[str, Movements]:
    """A month's movements from its kept row (the days' amounts summed) and the row of the
    month before (its close is the opening), as ``rollups.kept_movements`` from the days."""
    result = {}
    for currency in sorted(month.figures):
        row, start = month.figures[currency], opening.mrr.get(currency, 0)
        result[currency] = Movements(
            currency, start, row["new"], row["expansion"], row["contraction"], row["churn"], row["reactivation"],
            start + row["new"] + row["expansion"] + row["reactivation"] - row["contraction"] - row["churn"])
    return result


def _refunds_and_disputes(month: DayFigures) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    refunded = {c: (v.get("refunds", 0), v.get("refunded", 0)) for c, v in month.money.items() if v.get("refunds")}
    disputed = {c: (v.get("disputes", 0), v.get("disputed", 0)) for c, v in month.money.items() if v.get("disputes")}
    return refunded, disputed


def covers_report(months: Mapping[str, DayFigures], month: str, *, today: date, count: int = MONTHS_SHOWN) -> bool:
    """Whether the kept months (by ``YYYY-MM``) hold every month a report on ``month`` shows
    and the one before (its opening), whole, closing where the report closes them."""
    shown = shown_months(month, today, count)
    wanted = [(month_of(shown[0].first - ONE_DAY), shown[0].first - ONE_DAY)] + [(p.label, p.close) for p in shown]
    return all(label in months and months[label].complete and months[label].day == close
               and months[label].usage_kept for label, close in wanted)


def kept_report(months: Mapping[str, DayFigures], cohorts: Mapping[str, CohortRow], *, today: date,
                month: str, count: int = MONTHS_SHOWN) -> RevenueReport | None:
    """The report on ``month`` from the kept months (each a ``DayFigures`` of its close, the
    shards added up, by ``YYYY-MM``) and cohort rows; None when they do not hold all it needs
    (a month missing, partly written, or closing on another day than the report's: the
    caller recomputes)."""
    shown = shown_months(month, today, count)
    before = month_of(shown[0].first - ONE_DAY)
    if not covers_report(months, month, today=today, count=count):
        return None
    closes = {months[p.label].day: months[p.label] for p in shown}
    grid = kept_cohorts(cohorts, closes, [(p.label, p.close) for p in shown])
    if grid is None:
        return None
    by_currency = {currency: kept_cohorts(cohorts, closes, [(p.label, p.close) for p in shown], currency)
                   for currency in sorted(months[shown[-1].label].figures)}
    if any(found is None for found in by_currency.values()):
        return None
    labels = [before] + [p.label for p in shown]
    rows = [MonthRow(p.label, p.first, p.close, month_movements(months[labels[n]], months[p.label]),
                     months[p.label].usage)
            for n, p in enumerate(shown)]
    last, close, opening = rows[-1], months[shown[-1].label], months[labels[-2]]
    refunded, disputed = _refunds_and_disputes(close)
    paying = {c: v["paying"] for c, v in close.figures.items() if v.get("paying")}
    return RevenueReport(
        today=today,
        month=month,
        close=last.close,
        mrr=close.mrr,
        excluded={reason: close.count(reason.value) for reason in Excluded},
        months=rows,
        customer_churn=CustomerChurn(opening.paying, close.count("lost")),
        revenue_churn=revenue_churn(last.by_currency),
        cohorts=grid,
        mrr_cohorts={currency: found for currency, found in by_currency.items() if found is not None},
        figures=Figures(close.paying, Ratio(close.count("trials_converted"), close.count("trials_ended")),
                        Ratio(close.count("past_due_recovered"), close.count("past_due_began")),
                        currency_rows(close.mrr, last.by_currency, paying, refunded, disputed, close.usage),
                        close.count("trials_started")),
        source="kept",
    )
