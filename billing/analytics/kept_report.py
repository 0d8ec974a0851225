"""The revenue report made from the kept items (docs/ANALYTICS.md, "Kept figures"): the
same ``RevenueReport`` ``report.build_report`` makes from every account's history, to the
minor unit, when ``revenue_rebuild`` has kept every day it needs (the close of the day
before its first month to its last close) and the cohorts of its months. Pure: the
reading is ``rebuild.kept_days``' and ``revenue_rollups.cohort_rows``'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import date

from billing.access.revenue_rollups import CohortRow
from billing.analytics.cohort_table import kept_cohorts
from billing.analytics.figures import Figures, Ratio, currency_rows
from billing.analytics.mrr import ONE_DAY, Excluded
from billing.analytics.report import MonthRow, RevenueReport, shown_months
from billing.analytics.retention import CustomerChurn, revenue_churn
from billing.analytics.rollups import DayFigures, covers, days, kept_movements


def report_days(month: str, today: date) -> tuple[date, date]:
    """The days a report on ``month`` needs kept: from the opening of its first month."""
    shown = shown_months(month, today)
    return shown[0].first - ONE_DAY, shown[-1].close


def _sums(kept: Mapping[date, DayFigures], first: date, close: date, *names: str) -> list[int]:
    return [sum(kept[d].count(name) for d in days(first, close)) for name in names]


def _money(kept: Mapping[date, DayFigures], first: date, close: date
           ) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    sums: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for day in days(first, close):
        for currency, values in kept[day].money.items():
            for name, value in values.items():
                sums[currency][name] += value
    refunded = {c: (v["refunds"], v["refunded"]) for c, v in sums.items() if v["refunds"]}
    disputed = {c: (v["disputes"], v["disputed"]) for c, v in sums.items() if v["disputes"]}
    return refunded, disputed


def kept_report(kept: Mapping[date, DayFigures], cohorts: Mapping[str, CohortRow], *, today: date,
                month: str) -> RevenueReport | None:
    """The report on ``month`` from the kept days and cohort rows; None when they do not
    hold all it needs (the caller recomputes)."""
    shown = shown_months(month, today)
    if not covers(dict(kept), shown[0].first - ONE_DAY, shown[-1].close):
        return None
    grid = kept_cohorts(cohorts, kept, [(p.label, p.close) for p in shown])
    if grid is None:
        return None
    rows = [MonthRow(p.label, p.first, p.close, kept_movements(dict(kept), p.first, p.close)) for p in shown]
    last = rows[-1]
    close = kept[last.close]
    ended, converted, began, recovered = _sums(kept, last.first, last.close, "trials_ended", "trials_converted",
                                               "past_due_began", "past_due_recovered")
    refunded, disputed = _money(kept, last.first, last.close)
    paying = {c: v["paying"] for c, v in close.figures.items() if v.get("paying")}
    return RevenueReport(
        today=today,
        month=month,
        close=last.close,
        mrr=close.mrr,
        excluded={reason: close.count(reason.value) for reason in Excluded},
        months=rows,
        customer_churn=CustomerChurn(kept[last.first - ONE_DAY].paying, close.count("lost")),
        revenue_churn=revenue_churn(last.by_currency),
        cohorts=grid,
        figures=Figures(close.paying, Ratio(converted, ended), Ratio(recovered, began),
                        currency_rows(close.mrr, last.by_currency, paying, refunded, disputed)),
        source="kept",
    )
