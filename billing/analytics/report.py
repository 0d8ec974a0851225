"""The revenue report: MRR per currency, a year of monthly movements, the month's churn
and the cohorts, assembled from the subscriptions' histories (pure: the reading is
``reading.py``'s). The staff page and ``manage.py revenue_report`` both show this one
object, so they cannot disagree."""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from billing.analytics.figures import Figures, Money, month_figures
from billing.analytics.history import SubHistory
from billing.analytics.mrr import (
    ONE_DAY,
    Excluded,
    Movements,
    Step,
    excluded_at,
    mrr_at,
    paying_customers,
    steps,
)
from billing.analytics.periods import Interval, Period, periods_between
from billing.analytics.reporting import Converted, ConvertedMovements
from billing.analytics.retention import (
    Cohort,
    CustomerChurn,
    RevenueChurn,
    cohorts,
    customer_churn,
    month_of,
    revenue_churn,
)
from billing.analytics.series import movement_rows
from billing.rules.schedule import add_months

MONTHS_SHOWN = 12  # a report's months unless a range says otherwise
MAX_MONTHS_SHOWN = 36  # a range's most: three years of monthly columns
MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


class BadMonth(ValueError):
    """Not a month (``YYYY-MM``), or one after today's."""


def parse_month(text: str, today: date) -> str:
    match = MONTH.match(text or "")
    if not match or int(match.group(1)) < 2000 or text > month_of(today):
        raise BadMonth(text)
    return text


def month_days(month: str) -> tuple[date, date]:
    year, number = int(month[:4]), int(month[5:])
    return date(year, number, 1), date(year, number, calendar.monthrange(year, number)[1])


def months_ending(month: str, count: int) -> list[str]:
    year, number = int(month[:4]), int(month[5:])
    return [f"{y:04d}-{m:02d}" for y, m in (add_months(year, number, -n) for n in range(count - 1, -1, -1))]


@dataclass(frozen=True)
class MonthRow:
    month: str
    first: date
    close: date  # the month's last day, or today for the month under way
    by_currency: dict[str, Movements]
    # the usage revenue of the charges paid in the month, per currency (those with some)
    usage: dict[str, int] = field(default_factory=dict)


def usage_in(usage: Sequence[Money], first: date, close: date) -> dict[str, int]:
    """The usage revenue paid ``first``..``close``, per currency (those with some)."""
    found: dict[str, int] = {}
    for item in usage:
        if first <= item.day <= close and item.amount:
            found[item.currency] = found.get(item.currency, 0) + item.amount
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class RevenueReport:
    today: date
    month: str  # the month reported on (its churn; the last of the twelve rows)
    close: date  # the day ``mrr`` is taken at: the month's close
    mrr: dict[str, int]
    excluded: dict[Excluded, int]  # subscriptions in force counted 0 at ``close``, and why
    months: list[MonthRow]
    customer_churn: CustomerChurn
    revenue_churn: list[RevenueChurn]
    cohorts: list[Cohort]
    figures: Figures | None = None
    # per currency: the cohorts of its first payments, each with its MRR at every close
    mrr_cohorts: dict[str, list[Cohort]] = field(default_factory=dict)
    # ``mrr`` added up in the reporting currency (set by ``revenue_report``: it reads the rates)
    reporting: Converted | None = None
    # the month's usage revenue added up in it the same way, at the same close's rates
    usage_reporting: Converted | None = None
    # each month's movements added up in it, the rates' change its own figure (``fx``)
    movements_reporting: tuple[ConvertedMovements, ...] = ()
    # each month's usage revenue added up in it, at the rates of the month's close
    usage_months_reporting: tuple[Converted, ...] = ()
    # where the figures come from: "kept" (revenue_rebuild's items) or "recomputed" (every
    # account's history, read for this report)
    source: str = "recomputed"

    @property
    def currencies(self) -> list[str]:
        found = set(self.mrr)
        for row in self.months:
            found.update(row.by_currency)
        return sorted(found)

    @property
    def usage_currencies(self) -> list[str]:
        """The currencies with usage revenue in any month shown."""
        return sorted({currency for row in self.months for currency in row.usage})

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON values: amounts in minor units with their currency, rates in percent
        as strings (``"12.5"``; null when there was nothing to divide)."""
        def rate(value: Decimal | None) -> str | None:
            return None if value is None else str(value)

        return {
            "today": self.today.isoformat(),
            "month": self.month,
            "figures_from": self.source,
            "close": self.close.isoformat(),
            "mrr": self.mrr,
            "not_counted": {reason.value: count for reason, count in self.excluded.items()},
            "movements": [
                {"month": row.month, "close": row.close.isoformat(), "currencies": {
                    currency: {"opening": m.opening, "new": m.new, "expansion": m.expansion,
                               "contraction": m.contraction, "churn": m.churn, "reactivation": m.reactivation,
                               "closing": m.closing}
                    for currency, m in row.by_currency.items()}}
                for row in self.months
            ],
            "customer_churn": {"at_start": self.customer_churn.at_start, "lost": self.customer_churn.lost,
                               "rate": rate(self.customer_churn.rate)},
            "revenue_churn": [
                {"currency": r.currency, "opening": r.opening, "lost": r.lost, "regained": r.regained,
                 "gross_rate": rate(r.gross_rate), "net_rate": rate(r.net_rate)}
                for r in self.revenue_churn
            ],
            "usage_by_month": [
                {"month": row.month, "close": row.close.isoformat(), "usage_revenue": row.usage,
                 "reporting": _converted(conv, "usage_revenue")}
                for row, conv in zip(self.months, self.usage_months_reporting or [None] * len(self.months),
                                     strict=True)],
            "mrr_reporting": _converted(self.reporting, "mrr"),
            "usage_revenue_reporting": _converted(self.usage_reporting, "usage_revenue"),
            "movements_reporting": [
                {"month": m.month, "close": m.close.isoformat(), "opening": m.opening, "new": m.new,
                 "expansion": m.expansion, "reactivation": m.reactivation, "contraction": m.contraction,
                 "churn": m.churn, "fx": m.fx, "closing": m.closing, "unconverted": list(m.unconverted)}
                for m in self.movements_reporting],
            "figures": None if self.figures is None else {
                "paying_customers": self.figures.paying_customers,
                "trial_conversion": {"ended": self.figures.trials.whole, "converted": self.figures.trials.part,
                                     "rate": rate(self.figures.trials.rate)},
                "trials_started": self.figures.trials_started,
                "payment_recovery": {"past_due": self.figures.recovery.whole,
                                     "recovered": self.figures.recovery.part,
                                     "rate": rate(self.figures.recovery.rate)},
                "currencies": {f.currency: {
                    "mrr": f.mrr, "arr": f.arr, "paying_customers": f.paying, "arpa": f.arpa,
                    "net_revenue_retention": rate(f.net_retention), "gross_revenue_retention": rate(f.gross_retention),
                    "refunds": f.refunds, "refunded": f.refunded, "disputes": f.disputes, "disputed": f.disputed,
                    "usage_revenue": f.usage}
                    for f in self.figures.by_currency}},
            "cohorts": [
                {"month": c.month, "customers": c.size, "retained": list(c.retained),
                 "shares": [rate(s) for s in c.shares]}
                for c in self.cohorts
            ],
            "mrr_cohorts": {currency: [
                {"month": c.month, "customers": c.size, "mrr": list(c.mrr or ()),
                 "mrr_shares": [rate(s) for s in c.mrr_shares]}
                for c in grid] for currency, grid in self.mrr_cohorts.items()},
        }


def _converted(conv: Converted | None, amount_key: str) -> dict[str, Any] | None:
    """A figure in the reporting currency as JSON (``as_dict``): each currency's line, its
    amount under ``amount_key``, and the total."""
    if conv is None:
        return None
    return {"currency": conv.reporting, "total": conv.total,
            "lines": [{"currency": line.currency, amount_key: line.amount,
                       "rate": None if line.rate is None else str(line.rate),
                       "rate_date": line.published.isoformat() if line.published else None,
                       "provisional": line.provisional, "converted": line.converted}
                      for line in conv.lines]}


def shown_months(month: str, today: date, count: int = MONTHS_SHOWN) -> list[Period]:
    """The ``count`` months (twelve unless a range says otherwise) a report on ``month``
    shows, ending with it, each closing on its last day (today for the month under way)."""
    return periods_between(month_days(months_ending(month, count)[0])[0], month_days(month)[1],
                           Interval.MONTH, today)


def months_in_range(first: str, last: str, today: date) -> int:
    """How many months ``first``..``last`` (``YYYY-MM``, each checked as ``parse_month``)
    spans; ``BadMonth`` when ``first`` comes after ``last`` or the range is longer than
    ``MAX_MONTHS_SHOWN``."""
    first, last = parse_month(first, today), parse_month(last, today)
    count = (int(last[:4]) - int(first[:4])) * 12 + int(last[5:]) - int(first[5:]) + 1
    if not 1 <= count <= MAX_MONTHS_SHOWN:
        raise BadMonth(first)
    return count


def mrr_cohorts(moved: Sequence[Step], closes: Sequence[tuple[str, date]]) -> dict[str, list[Cohort]]:
    """Per currency that moved by the last close (as the kept figures hold one): the
    cohorts of its first payments with their MRR at each close (``retention.cohorts``'
    ``with_mrr``)."""
    until = closes[-1][1]
    currencies = sorted({s.currency for s in moved if s.day <= until})
    return {c: cohorts([s for s in moved if s.currency == c], closes, with_mrr=True) for c in currencies}


def build_report(histories: Sequence[SubHistory], *, today: date, month: str | None = None,
                 refunds: Sequence[Money] = (), disputes: Sequence[Money] = (),
                 months: int = MONTHS_SHOWN, usage: Sequence[Money] = ()) -> RevenueReport:
    """The report on ``month`` (default: today's) as of ``today``: ``months`` months of
    movements ending with it, each closing on its last day (today for the month under way)."""
    month = month or month_of(today)
    shown = shown_months(month, today, months)
    closes = [(p.label, p.close) for p in shown]
    until = closes[-1][1]
    moved = steps(histories, until)
    # the API's monthly rows (series.movement_rows): one computation for both
    rows = [MonthRow(r.period.label, r.period.first, r.period.close, r.by_currency,
                     usage_in(usage, r.period.first, r.period.close))
            for r in movement_rows(moved, shown)]
    last = rows[-1]
    mrr = mrr_at(histories, until)
    return RevenueReport(
        today=today,
        month=month,
        close=until,
        mrr=mrr,
        excluded=excluded_at(histories, until),
        months=rows,
        customer_churn=customer_churn(moved, last.first - ONE_DAY, last.close),
        revenue_churn=revenue_churn(last.by_currency),
        cohorts=cohorts(moved, closes),
        mrr_cohorts=mrr_cohorts(moved, closes),
        figures=month_figures(histories=histories, steps=moved, mrr=mrr, moved=last.by_currency,
                              paying_customers=len(paying_customers(moved, last.close)), first=last.first,
                              close=last.close, refunds=refunds, disputes=disputes, usage=usage),
    )
