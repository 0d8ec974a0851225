"""The retention cohorts as kept items (docs/ANALYTICS.md, "Kept figures"): made from the
MRR steps by ``revenue_rebuild``, one row per cohort month, and read back as the report's
``retention.cohorts`` grid, to the unit. Pure: no I/O.

A cohort's customers are fixed once its month has closed, and so is whether they pay at
a past month's close; only the month under way closes on a later day each day. So a kept
row answers a grid when each of its months closes where the row closes it (its last day,
or the rebuild's last day for the month it ran in).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from itertools import zip_longest

from billing.access.revenue_rollups import CohortRow
from billing.analytics.mrr import Step
from billing.analytics.periods import month_last, shift_month
from billing.analytics.retention import Cohort, month_of
from billing.analytics.rollups import DayFigures

ANY = "*"  # the cohort of customers by their first paying day in any currency


def _months(first: str, last: str) -> list[str]:
    found = [first]
    while found[-1] < last:
        found.append(shift_month(found[-1], 1))
    return found


def cohort_table(all_steps: Sequence[Step], through: date) -> list[CohortRow]:
    """Every cohort month from the first paying day's to ``through``'s, each with its
    members and how many pay (and, per currency, their MRR) at each month's close since."""
    ordered = sorted((s for s in all_steps if s.day <= through), key=lambda s: s.day)
    first_any: dict[str, date] = {}
    first_in: dict[tuple[str, str], date] = {}
    for step in ordered:
        if step.after:
            first_any.setdefault(step.customer, step.day)
            first_in.setdefault((step.customer, step.currency), step.day)
    if not first_any:
        return []
    months = _months(month_of(min(first_any.values())), month_of(through))
    # each month's close: who pays in what, and how much
    level: dict[tuple[str, str], int] = {}
    closes: list[dict[tuple[str, str], int]] = []
    n = 0
    for month in months:
        close = min(month_last(month), through)
        while n < len(ordered) and ordered[n].day <= close:
            level[(ordered[n].customer, ordered[n].currency)] = ordered[n].after
            n += 1
        closes.append({key: amount for key, amount in level.items() if amount})
    paying_any = [{customer for customer, _ in close} for close in closes]
    members: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for customer, day in first_any.items():
        members[month_of(day)][ANY].add(customer)
    for (customer, currency), day in first_in.items():
        members[month_of(day)][currency].add((customer, currency))
    rows = []
    for i, month in enumerate(months):
        found = members.get(month, {})
        retained: dict[str, list[int]] = {}
        mrr: dict[str, list[int]] = {}
        for key, group in sorted(found.items()):
            if key == ANY:
                retained[key] = [len(group & paying_any[j]) for j in range(i, len(months))]
            else:
                retained[key] = [sum(1 for pair in group if pair in closes[j]) for j in range(i, len(months))]
                mrr[key] = [sum(closes[j].get(pair, 0) for pair in group) for j in range(i, len(months))]
        rows.append(CohortRow(month, through, {key: len(group) for key, group in sorted(found.items())},
                              retained, mrr))
    return rows


def merged(rows: Iterable[CohortRow]) -> dict[str, CohortRow]:
    """The kept rows of each cohort month added up over the parts that kept them, by
    ``YYYY-MM`` (a customer is one part's, so the counts and amounts add up). A month whose
    parts kept it through different days (a part of a split rebuild killed, or not run yet)
    closes on no day (``date.min``), so no reader takes it for any close."""
    found: dict[str, CohortRow] = {}
    for row in rows:
        have = found.get(row.month)
        if have is None:
            found[row.month] = CohortRow(row.month, row.through, dict(row.members),
                                         {k: list(v) for k, v in row.retained.items()},
                                         {k: list(v) for k, v in row.mrr.items()}, shards=row.shards)
            continue
        if have.through != row.through:
            found[row.month] = have = CohortRow(have.month, date.min, have.members, have.retained, have.mrr,
                                                shards=have.shards)
        for key, size in row.members.items():
            have.members[key] = have.members.get(key, 0) + size
        for into, more in ((have.retained, row.retained), (have.mrr, row.mrr)):
            for key, values in more.items():
                into[key] = [a + b for a, b in zip_longest(into.get(key, []), values, fillvalue=0)]
    return found


def kept_cohorts(rows: Mapping[str, CohortRow], kept: Mapping[date, DayFigures],
                 month_closes: Sequence[tuple[str, date]], currency: str | None = None) -> list[Cohort] | None:
    """The grid ``retention.cohorts`` makes for ``month_closes`` (of ``currency``'s first
    payments, when one is given), from the kept rows; None when they do not answer it. A
    month without a row is an empty cohort only when its close is kept and nothing had
    ever been paid (in ``currency``) by then: a rebuild keeps every month from the first
    paying one."""
    key = currency or ANY
    grid: list[Cohort] = []
    for i, (month, close) in enumerate(month_closes):
        width = len(month_closes) - i
        row = rows.get(month)
        if row is None:
            day = kept.get(close)
            if day is None or not day.complete or (day.figures if currency is None else currency in day.figures):
                return None
            grid.append(Cohort(month, 0, (0,) * width, None if currency is None else (0,) * width))
            continue
        if any(min(month_last(later), row.through) != later_close for later, later_close in month_closes[i:]):
            return None
        size, values = row.members.get(key, 0), row.retained.get(key, [])
        amounts = row.mrr.get(currency, []) if currency is not None else []
        if size and (len(values) < width or (currency is not None and len(amounts) < width)):
            return None
        mrr = None if currency is None else (tuple(amounts[:width]) if size else (0,) * width)
        grid.append(Cohort(month, size, tuple(values[:width]) if size else (0,) * width, mrr))
    return grid
