"""The API's MRR, movements and cohorts read from the kept items (docs/ANALYTICS.md, "Kept
figures"): the same body ``series.metrics_body`` makes from the recomputation, when every
day the periods need is kept whole (the day before the first, for its opening, to the
last close; for months, quarters and years the kept months, each at its close) and, for
the cohorts (by month only), the cohort rows answer them. Pure: the reading is
``rebuild.kept_days``', ``rebuild.kept_month_closes``' and ``rebuild.kept_cohorts_of``'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from billing.access.revenue_rollups import CohortRow
from billing.analytics.cohort_table import kept_cohorts
from billing.analytics.periods import Interval, Period
from billing.analytics.retention import Cohort
from billing.analytics.rollups import ONE_DAY, DayFigures, covers, covers_months, kept_movements
from billing.analytics.series import cohort_dict, movement_dict, only, period_dict

KEPT_KINDS = ("mrr", "movements", "cohorts")


def needed(periods: Sequence[Period]) -> tuple[date, date]:
    """The days a request's periods need kept: from the close of the day before the first."""
    return periods[0].first - ONE_DAY, periods[-1].close


def by_month(interval: Interval) -> bool:
    """Whether the periods are read from the kept months (a month, quarter or year is whole
    months, and a month's item sums its days) rather than the kept days."""
    return interval != Interval.DAY


def answerable(kind: str, kept: dict[date, DayFigures], periods: Sequence[Period], interval: Interval) -> bool:
    """Whether ``kept`` (the days, or the months at their closes when ``by_month``) holds
    every close the periods need, whole."""
    return kind in KEPT_KINDS and (covers_months if by_month(interval) else covers)(kept, *needed(periods))


def cohort_grid(kept: dict[date, DayFigures], rows: dict[str, CohortRow], periods: Sequence[Period],
                currency: str | None) -> list[Cohort] | None:
    """The cohorts of monthly ``periods`` from the kept rows; None when they do not answer."""
    return kept_cohorts(rows, kept, [(p.label, p.close) for p in periods], currency)


def kept_usage(kept: dict[date, DayFigures], period: Period) -> dict[str, int]:
    """A period's usage revenue from the kept days, or months (each its days' summed)."""
    found: dict[str, int] = {}
    for day in sorted(d for d in kept if period.first <= d <= period.close):
        for currency, amount in kept[day].usage.items():
            found[currency] = found.get(currency, 0) + amount
    return dict(sorted(found.items()))


def kept_body(kind: str, kept: dict[date, DayFigures], periods: Sequence[Period], interval: Interval,
              currency: str | None, grid: list[Cohort] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"object": f"metrics.{kind}", "interval": interval.value, "currency": currency}
    if kind == "cohorts":
        body["data"] = [cohort_dict(c) for c in grid or ()]
    elif kind == "mrr":
        body["data"] = [{**period_dict(p), "mrr": only(currency, kept[p.close].mrr),
                         "usage_revenue": only(currency, kept_usage(kept, p))} for p in periods]
    else:
        body["data"] = [{**period_dict(p), "currencies": {
            c: movement_dict(m) for c, m in only(currency, kept_movements(kept, p.first, p.close)).items()}}
            for p in periods]
    return body
