"""The figures per period (the API's ``/metrics/...`` and the page's months): MRR at each
period's close, each period's movements, and the cohorts by period of first payment.
Pure: no I/O. The page's twelve months are these rows with the monthly interval, so the
API and the page cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from billing.analytics.figures import Money
from billing.analytics.history import SubHistory
from billing.analytics.mrr import Movements, Step, movements, mrr_at
from billing.analytics.periods import BadRange, Interval, Period, label_of
from billing.analytics.retention import Cohort, cohorts


@dataclass(frozen=True)
class PeriodRow:
    period: Period
    by_currency: dict[str, Movements]


def movement_rows(moved: Sequence[Step], periods: Sequence[Period]) -> list[PeriodRow]:
    return [PeriodRow(p, movements(moved, p.first, p.close)) for p in periods]


def mrr_rows(histories: Sequence[SubHistory], periods: Sequence[Period]) -> list[tuple[Period, dict[str, int]]]:
    return [(p, mrr_at(histories, p.close)) for p in periods]


def usage_in(usage: Sequence[Money], period: Period) -> dict[str, int]:
    """The usage revenue of a period per currency (those with some): the usage billed by
    the charges paid in it, net of tax."""
    found: dict[str, int] = {}
    for item in usage:
        if period.first <= item.day <= period.close and item.amount:
            found[item.currency] = found.get(item.currency, 0) + item.amount
    return dict(sorted(found.items()))


def cohort_rows(moved: Sequence[Step], periods: Sequence[Period], interval: Interval, *,
                with_mrr: bool = False) -> list[Cohort]:
    return cohorts(moved, [(p.label, p.close) for p in periods], label=lambda day: label_of(day, interval),
                   with_mrr=with_mrr)


def only(currency: str | None, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (keyed by currency) limited to ``currency`` when one is asked for."""
    return values if currency is None else {c: v for c, v in values.items() if c == currency}


def movement_dict(m: Movements) -> dict[str, int]:
    return {"opening": m.opening, "new": m.new, "expansion": m.expansion, "contraction": m.contraction,
            "churn": m.churn, "reactivation": m.reactivation, "closing": m.closing}


def period_dict(period: Period) -> dict[str, str]:
    return {"period": period.label, "start": period.first.isoformat(), "close": period.close.isoformat()}


def cohort_dict(cohort: Cohort) -> dict[str, Any]:
    """A cohort as JSON; one of a currency's first payments has its MRR at each close and
    that as a share of its first close's (``mrr_shares``: its net MRR retention)."""
    found = {"cohort": cohort.month, "customers": cohort.size, "retained": list(cohort.retained),
             "shares": [None if s is None else str(s) for s in cohort.shares]}
    if cohort.mrr is not None:
        found |= {"mrr": list(cohort.mrr), "mrr_shares": [None if s is None else str(s) for s in cohort.mrr_shares]}
    return found


CURRENCY_CODE_LENGTH = 3


def parse_currency(text: str | None) -> str | None:
    if not text:
        return None
    code = text.strip().upper()
    if len(code) != CURRENCY_CODE_LENGTH or not code.isascii() or not code.isalpha():
        raise BadRange("currency", "currency is a three-letter ISO 4217 code.")
    return code


def metrics_body(kind: str, histories: Sequence[SubHistory], moved: Sequence[Step], periods: Sequence[Period],
                 interval: Interval, currency: str | None, usage: Sequence[Money] = ()) -> dict[str, Any]:
    """The API's answer for ``kind`` (``mrr``, ``movements`` or ``cohorts``): amounts in
    minor units per currency, rates in percent as strings; ``mrr`` with each period's usage
    revenue beside it (never in it)."""
    body: dict[str, Any] = {"object": f"metrics.{kind}", "interval": interval.value, "currency": currency}
    if kind == "mrr":
        body["data"] = [{**period_dict(p), "mrr": only(currency, amounts),
                         "usage_revenue": only(currency, usage_in(usage, p))}
                        for p, amounts in mrr_rows(histories, periods)]
    elif kind == "movements":
        body["data"] = [{**period_dict(row.period), "currencies": {
            c: movement_dict(m) for c, m in only(currency, row.by_currency).items()}}
            for row in movement_rows(moved, periods)]
    else:
        # A cohort is of customers, not of a currency: ``currency`` keeps those whose first
        # paying step was in it (a customer paying in two currencies is counted once).
        kept = [s for s in moved if currency is None or s.currency == currency]
        body["data"] = [cohort_dict(c) for c in cohort_rows(kept, periods, interval, with_mrr=currency is not None)]
    return body
