"""The API's MRR, movements and cohorts read from the kept items (docs/ANALYTICS.md, "Kept
figures"): the same body ``series.metrics_body`` makes from the recomputation, when every
day the periods need is kept whole (the day before the first, for its opening, to the
last close; for months, quarters and years the kept months, each at its close) and, for
the cohorts (by month, quarter or year: the month rows added up), the cohort rows answer them. Pure: the reading is
``rebuild.kept_days``', ``rebuild.kept_month_closes``' and ``rebuild.kept_cohorts_of``'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
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
                currency: str | None, interval: Interval = Interval.MONTH) -> list[Cohort] | None:
    """The cohorts of ``periods`` (months, quarters or years) from the kept month rows;
    None when they do not answer. A quarter's or a year's cohort is its months' cohorts
    added up: a customer's first paying day is in one month, so in one of them, and is
    counted at a period's close as at the close of its last month."""
    closes = month_closes(periods[0].first, periods[-1].close)
    monthly = kept_cohorts(rows, kept, closes, currency)
    if monthly is None or interval == Interval.MONTH:
        return monthly
    return rolled_up(monthly, [close for _, close in closes], periods)


def month_closes(first: date, last: date) -> list[tuple[str, date]]:
    """Each month from ``first``'s to ``last``'s and the day it closes on (``last`` for the last)."""
    found = []
    month = first.replace(day=1)
    while month <= last:
        after = (month + timedelta(days=32)).replace(day=1)
        found.append((month.isoformat()[:7], min(after - ONE_DAY, last)))
        month = after
    return found


def rolled_up(monthly: Sequence[Cohort], closes: Sequence[date], periods: Sequence[Period]) -> list[Cohort]:
    """The month cohorts (one per close of ``closes``, in order) added up into ``periods``
    (each whole months, in order, covering them)."""
    last_month = [closes.index(p.close) for p in periods]  # each period's last month, by position
    grid = []
    for k, period in enumerate(periods):
        members = [(i, c) for i, c in enumerate(monthly) if period.first <= closes[i] <= period.close]
        size = sum(c.size for _, c in members)
        retained = tuple(sum(c.retained[last_month[later] - i] for i, c in members if c.size)
                         for later in range(k, len(periods)))
        mrr = None if not monthly or monthly[0].mrr is None else tuple(
            sum(c.mrr[last_month[later] - i] for i, c in members if c.size and c.mrr is not None)
            for later in range(k, len(periods)))
        grid.append(Cohort(period.label, size, retained, mrr))
    return grid


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
