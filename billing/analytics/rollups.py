"""The kept figures (docs/ANALYTICS.md, "Kept figures"): each day's MRR at the close, its
movements and its customer counts, per currency and per shard of the customers, made from
the movements (``mrr.steps``), and added up again over the shards on read. Pure: no I/O.

A customer's shard is fixed by its account id, so a customer is counted in one shard only
and the shards' counts add up (paying customers, new and churned customers).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import lru_cache
from typing import Protocol, TypeVar

from billing.access.revenue_rollups import RollupDay
from billing.analytics.daily import MONEY, Daily
from billing.analytics.mrr import Kind, Movements, Step

SHARDS = 16
FIGURES = ("mrr", "new", "expansion", "contraction", "churn", "reactivation", "paying", "new_customers",
           "churned_customers", "reactivated_customers")
# ``Counts``: customers in any currency (new, churned, reactivated; ``lost``: paying at the
# month's opening and not at the day's close), the subscriptions not counted at the close
# (``trial``, ``paused``), the trials that ended on the day and those converted, the
# past-due episodes begun on it and those recovered or lost on it (begun the same month),
# the trials started on it
COUNTS = ("new_customers", "churned_customers", "reactivated_customers", "lost", "trial", "paused",
          "trials_ended", "trials_converted", "past_due_began", "past_due_recovered", "past_due_lost",
          "trials_started")
ONE_DAY = timedelta(days=1)


@lru_cache(maxsize=65536)
def shard_of(customer: str, shards: int = SHARDS) -> int:
    """A stable shard for the customer (not Python's ``hash``: it changes per process)."""
    return int.from_bytes(hashlib.sha256(customer.encode()).digest()[:4], "big") % shards


@dataclass(frozen=True)
class Part:
    """One of the ``count`` processes a rebuild is split into (``REVENUE_REBUILD_PARTS``;
    docs/ANALYTICS.md, "A rebuild split over processes"): the customers whose shard of
    ``count`` is ``index``. ``count`` divides ``SHARDS``, so those are the customers of the
    day shards ``index``, ``index + count``, ... (a hash modulo 16, then modulo ``count``, is
    the hash modulo ``count``): no day shard is split between two parts, and a part writes
    its own rows only."""

    index: int  # from 0
    count: int

    def holds(self, customer: str) -> bool:
        return shard_of(customer, self.count) == self.index

    def has(self, shard: int) -> bool:
        """Whether a row of ``shard`` is this part's: a day or month row's (of ``SHARDS``) or
        a row cut into the parts themselves (a view's month, a cohort)."""
        return shard % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index + 1} of {self.count}"


class Sharded(Protocol):
    shard: int
    shards: int


R = TypeVar("R", bound=Sharded)


def own(rows: Iterable[R], part: Part | None = None, shards: int | None = None) -> list[R]:
    """The kept rows cut into ``shards`` (when given: rows cut otherwise are left from a
    rebuild made with another ``REVENUE_REBUILD_PARTS``, and not read), and of ``part``
    alone when one is given, numbered within it, so that ``complete`` means "every shard of
    the part" (its check compares its own rows only)."""
    found = [row for row in rows if shards is None or row.shards == shards]
    if part is None or part.count == 1:
        return found
    return [replace(row, shard=row.shard // part.count, shards=row.shards // part.count)
            for row in found if part.has(row.shard)]


def days(first: date, last: date) -> Iterator[date]:
    day = first
    while day <= last:
        yield day
        day += ONE_DAY


def day_rows(all_steps: Sequence[Step], first: date, last: date, shards: int = SHARDS,
             daily: Daily | None = None) -> Iterator[RollupDay]:
    """Every shard's row of every day ``first``..``last`` (a shard with nothing still has
    its row: a day is kept when all its shards are). The steps before ``first`` set the
    levels the first day opens with; ``daily`` (``daily.daily_counts``, cut into as many
    shards) adds the counts that are not MRR steps."""
    level: dict[tuple[str, str], int] = {}
    customers = Customers(lambda c: shard_of(c, shards), shards)
    running: list[dict[str, int]] = [defaultdict(int) for _ in range(shards)]
    ordered = sorted(all_steps, key=lambda s: s.day)
    starts = [min(first, ordered[0].day) if ordered else first]
    if daily is not None and daily.levels:
        starts.append(min(daily.levels))
    n = 0
    for day in days(min(starts), last):
        if day.day == 1:
            customers.open_month()
        moved: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        touched: set[str] = set()
        while n < len(ordered) and ordered[n].day == day:
            step = ordered[n]
            n += 1
            level[(step.customer, step.currency)] = step.after
            touched.add(step.customer)
            customers.step(step)
            row = moved[(shard_of(step.customer, shards), step.currency)]
            row[step.kind.value] += abs(step.delta)
            if step.kind == Kind.NEW:
                row["new_customers"] += 1
            elif step.kind == Kind.CHURN:
                row["churned_customers"] += 1
            elif step.kind == Kind.REACTIVATION:
                row["reactivated_customers"] += 1
        counts = customers.close_day(touched)
        if daily is not None:
            for shard, changes in daily.levels.get(day, {}).items():
                for name, value in changes.items():
                    running[shard][name] += value
        if day < first:
            continue
        for shard in range(shards):
            counts[shard].update({k: v for k, v in running[shard].items() if v})
            if daily is not None:
                counts[shard].update(daily.events.get(day, {}).get(shard, {}))
        money = daily.money.get(day, {}) if daily is not None else {}
        yield from _rows_of(day, level, moved, shards, counts, money)


class Customers:
    """Who pays in any currency, day by day: the any-currency new, churned and reactivated
    customers of a day (netted over the day, as the steps are), and those paying at the
    month's opening who pay nothing at a day's close (``lost``: the month's customer churn
    at that close, as ``retention.customer_churn`` counts it)."""

    def __init__(self, shard: Callable[[str], int], shards: int) -> None:
        self.shard, self.shards = shard, shards
        self.currencies: dict[str, set[str]] = defaultdict(set)  # the currencies each customer pays in
        self.paying: set[str] = set()
        self.ever: set[str] = set()
        self.opening: set[str] = set()
        self.lost: set[str] = set()
        self.lost_by_shard = [0] * shards

    def open_month(self) -> None:
        self.opening = set(self.paying)
        self.lost = set()
        self.lost_by_shard = [0] * self.shards

    def step(self, step: Step) -> None:
        (self.currencies[step.customer].add if step.after else self.currencies[step.customer].discard)(step.currency)

    def close_day(self, touched: set[str]) -> list[dict[str, int]]:
        counts: list[dict[str, int]] = [defaultdict(int) for _ in range(self.shards)]
        for customer in touched:
            now, before, shard = bool(self.currencies[customer]), customer in self.paying, self.shard(customer)
            if now and not before:
                counts[shard]["reactivated_customers" if customer in self.ever else "new_customers"] += 1
                self.paying.add(customer)
                self.ever.add(customer)
            elif before and not now:
                counts[shard]["churned_customers"] += 1
                self.paying.discard(customer)
            if customer in self.opening and now == (customer in self.lost):
                (self.lost.discard if now else self.lost.add)(customer)
                self.lost_by_shard[shard] += -1 if now else 1
        for shard, lost in enumerate(self.lost_by_shard):
            counts[shard]["lost"] = lost
        return counts


def _rows_of(day: date, level: dict[tuple[str, str], int], moved: dict[tuple[int, str], dict[str, int]],
             shards: int, counts: list[dict[str, int]], money: dict[int, dict[str, dict[str, int]]]
             ) -> Iterator[RollupDay]:
    figures: list[dict[str, dict[str, int]]] = [defaultdict(lambda: dict.fromkeys(FIGURES, 0)) for _ in range(shards)]
    paying: list[set[str]] = [set() for _ in range(shards)]
    for (customer, currency), amount in level.items():
        shard = shard_of(customer, shards)
        # every currency that ever moved has its row, zero or not: a period's movements
        # list the currencies moved up to its close, as the recomputation does
        figures[shard][currency]["mrr"] += amount
        if amount:
            figures[shard][currency]["paying"] += 1
            paying[shard].add(customer)
    for (shard, currency), row in moved.items():
        for name, value in row.items():
            figures[shard][currency][name] += value
    for shard in range(shards):
        yield RollupDay(day, shard, shards, {c: dict(v) for c, v in sorted(figures[shard].items())},
                        len(paying[shard]), {k: v for k, v in sorted(counts[shard].items()) if v},
                        {c: dict(v) for c, v in sorted(money.get(shard, {}).items())})


# --- the months: each month's days folded into one row per shard ----------------------------

FIGURE_LEVELS = ("mrr", "paying")  # at the close; the other figures are the day's, summed
COUNT_LEVELS = ("lost", "trial", "paused")


def month_rows(rows: Iterable[RollupDay]) -> list[RollupDay]:
    """Each month's and shard's days (in order, from the month's first day) folded into one
    row closing on the last of them: the amounts and the day's counts summed, the levels of
    the last day. A month's figures are then what the days' would give, from one item."""
    found: dict[tuple[str, int], RollupDay] = {}
    for row in rows:
        key = (row.day.isoformat()[:7], row.shard)
        before = found.get(key)
        if before is None:
            found[key] = RollupDay(row.day, row.shard, row.shards, {c: dict(v) for c, v in row.figures.items()},
                                   row.paying, dict(row.counts), {c: dict(v) for c, v in row.money.items()},
                                   row.usage_kept)
            continue
        figures = {c: dict(v) for c, v in before.figures.items()}
        for currency, values in row.figures.items():
            into = figures.setdefault(currency, dict.fromkeys(FIGURES, 0))
            for name, value in values.items():
                into[name] = value if name in FIGURE_LEVELS else into.get(name, 0) + value
        counts = {k: v for k, v in before.counts.items() if k not in COUNT_LEVELS}
        for name, value in row.counts.items():
            counts[name] = value if name in COUNT_LEVELS else counts.get(name, 0) + value
        money = {c: dict(v) for c, v in before.money.items()}
        for currency, values in row.money.items():
            into = money.setdefault(currency, dict.fromkeys(MONEY, 0))
            for name, value in values.items():
                into[name] = into.get(name, 0) + value
        found[key] = RollupDay(row.day, row.shard, row.shards, figures, row.paying,
                               {k: v for k, v in sorted(counts.items()) if v}, money,
                               before.usage_kept and row.usage_kept)
    return [found[key] for key in sorted(found)]


# --- reading them back ----------------------------------------------------------------------


@dataclass
class DayFigures:
    """One day's figures, the shards added up."""

    day: date
    shards_seen: set[int] = field(default_factory=set)
    shards: int = 0
    figures: dict[str, dict[str, int]] = field(default_factory=dict)
    paying: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    money: dict[str, dict[str, int]] = field(default_factory=dict)
    # every shard's item keeps the usage billed (an item written before it did: recompute)
    usage_kept: bool = True

    def count(self, name: str) -> int:
        return self.counts.get(name, 0)

    @property
    def complete(self) -> bool:
        return bool(self.shards) and len(self.shards_seen) == self.shards

    @property
    def mrr(self) -> dict[str, int]:
        return {c: v["mrr"] for c, v in sorted(self.figures.items()) if v.get("mrr")}

    @property
    def usage(self) -> dict[str, int]:
        """The usage billed per currency (those with some)."""
        return {c: v["usage"] for c, v in sorted(self.money.items()) if v.get("usage")}


def merge(rows: Iterable[RollupDay]) -> dict[date, DayFigures]:
    """The shards of each day added up."""
    found: dict[date, DayFigures] = {}
    for row in rows:
        day = found.setdefault(row.day, DayFigures(row.day))
        day.shards_seen.add(row.shard)
        day.shards = max(day.shards, row.shards)
        day.paying += row.paying
        day.usage_kept = day.usage_kept and row.usage_kept
        for currency, values in row.figures.items():
            into = day.figures.setdefault(currency, dict.fromkeys(FIGURES, 0))
            for name, value in values.items():
                into[name] = into.get(name, 0) + value
        for name, value in row.counts.items():
            day.counts[name] = day.counts.get(name, 0) + value
        for currency, values in row.money.items():
            into = day.money.setdefault(currency, dict.fromkeys(MONEY, 0))
            for name, value in values.items():
                into[name] = into.get(name, 0) + value
    return found


def by_month(rows: Iterable[RollupDay]) -> dict[str, DayFigures]:
    """Months' rows (``month_rows``) added up over the shards, by ``YYYY-MM``; a month whose
    shards close on different days (a killed rebuild's) is not complete."""
    found: dict[str, DayFigures] = {}
    for close, figures in merge(rows).items():
        label = close.isoformat()[:7]
        if label in found:
            figures.shards_seen = set()  # split between two closes: neither is whole
        found[label] = figures
    return found


def covers(kept: dict[date, DayFigures], first: date, last: date) -> bool:
    """Whether every day ``first``..``last`` is kept whole (all its shards)."""
    return all(d in kept and kept[d].complete and kept[d].usage_kept for d in days(first, last))


def covers_months(kept: dict[date, DayFigures], first: date, last: date) -> bool:
    """Whether every month from ``first``'s to ``last``'s is kept whole at its close: its
    last day, or ``last`` for the last month (``kept`` holds the months at their closes)."""
    month = first.replace(day=1)
    while month <= last:
        after = (month + timedelta(days=32)).replace(day=1)
        close = min(after - ONE_DAY, last)
        if close not in kept or not kept[close].complete or not kept[close].usage_kept:
            return False
        month = after
    return True


def kept_movements(kept: dict[date, DayFigures], first: date, close: date) -> dict[str, Movements]:
    """A period's movements from the kept days, or the kept months (each at its close, its
    movements the sum of its days'): opening at the close before ``first`` (which must be
    kept too), the movements summed over what is kept from ``first`` to ``close``."""
    opening = kept[first - ONE_DAY].mrr
    sums: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for day in sorted(d for d in kept if first <= d <= close):
        for currency, values in kept[day].figures.items():
            for name in ("new", "expansion", "contraction", "churn", "reactivation"):
                sums[currency][name] += values.get(name, 0)
    result = {}
    for currency in sorted(kept[close].figures):
        row, start = sums[currency], opening.get(currency, 0)
        result[currency] = Movements(
            currency, start, row["new"], row["expansion"], row["contraction"], row["churn"], row["reactivation"],
            start + row["new"] + row["expansion"] + row["reactivation"] - row["contraction"] - row["churn"])
    return result


def differences(kept: dict[date, DayFigures], recomputed: dict[date, DayFigures]) -> list[tuple[date, str, str]]:
    """Each day and currency whose kept figures are not the recomputed ones: (day, currency
    or ``*`` for the day as a whole, what differs)."""
    found: list[tuple[date, str, str]] = []
    for day in sorted(set(kept) | set(recomputed)):
        mine, theirs = kept.get(day), recomputed.get(day)
        if mine is None or theirs is None or not mine.complete:
            found.append((day, "*", "not kept" if mine is None or not mine.complete else "not recomputed"))
            continue
        if not mine.usage_kept:
            found.append((day, "*", "usage not kept (an item of an earlier rebuild)"))
        for currency in sorted(set(mine.figures) | set(theirs.figures)):
            a = mine.figures.get(currency, dict.fromkeys(FIGURES, 0))
            b = theirs.figures.get(currency, dict.fromkeys(FIGURES, 0))
            wrong = [f"{name} kept {a.get(name, 0)} recomputed {b.get(name, 0)}" for name in FIGURES
                     if a.get(name, 0) != b.get(name, 0)]
            if wrong:
                found.append((day, currency, ", ".join(wrong)))
        if mine.paying != theirs.paying:
            found.append((day, "*", f"paying customers kept {mine.paying} recomputed {theirs.paying}"))
        wrong = [f"{name} kept {mine.count(name)} recomputed {theirs.count(name)}" for name in COUNTS
                 if mine.count(name) != theirs.count(name)]
        if wrong:
            found.append((day, "*", ", ".join(wrong)))
        for currency in sorted(set(mine.money) | set(theirs.money)):
            a, b = mine.money.get(currency, {}), theirs.money.get(currency, {})
            wrong = [f"{name} kept {a.get(name, 0)} recomputed {b.get(name, 0)}" for name in MONEY
                     if a.get(name, 0) != b.get(name, 0)]
            if wrong:
                found.append((day, currency, ", ".join(wrong)))
    return found
