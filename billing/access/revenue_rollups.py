"""The revenue rollups (docs/ANALYTICS.md, "Kept figures"): one item per day and shard,
``PK=REVENUE#<YYYY-MM>``, ``SK=<YYYY-MM-DD>#<shard>``. Written by ``revenue_rebuild`` with
BatchWriteItem (no conditions: every key and value is fixed by the recomputation, so
writing a day again puts the same item); a month is read with one Query (paged by
DynamoDB only past 1 MB: 31 days of 16 shards is far below)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from billing.models import (
    BillingItem,
    RevenueCohort,
    RevenueMonth,
    RevenueRollup,
    RevenueViewDays,
    RevenueViews,
)

SHARD_DIGITS = 2
Row = TypeVar("Row")


@dataclass(frozen=True)
class Scope:
    """The subscriptions of one product (``PRODUCT``, a SKU), of one price interval
    (``INTERVAL``: day, week, month or year) or in one currency (``CURRENCY``), whose months
    and cohorts are kept apart from the whole business's (docs/ANALYTICS.md, "Kept for one
    product, interval or currency")."""

    dimension: str  # PRODUCT, INTERVAL or CURRENCY
    value: str

    def __str__(self) -> str:
        return f"{self.dimension.lower()}={self.value}"


def _pk(model: type[RevenueMonth] | type[RevenueCohort], scope: Scope | None) -> str:
    """The partition of the whole business's months or cohorts, or of ``scope``'s."""
    if scope is None:
        return model.pk()
    return model.scoped_pk_template.format(dimension=scope.dimension, value=scope.value)


@dataclass(frozen=True)
class RollupDay:
    """What one shard kept for one day."""

    day: date
    shard: int
    shards: int
    figures: dict[str, dict[str, int]]  # currency -> figure -> value
    paying: int
    counts: dict[str, int] = field(default_factory=dict)  # the day's other counts (only those above 0)
    money: dict[str, dict[str, int]] = field(default_factory=dict)  # currency -> refunds/disputes/usage
    usage_kept: bool = True  # False: read from an item written before the usage was kept


USAGE = "usage"
# The ``Usage`` map always holds this key, so an item that kept no usage still says it kept
# it (an empty map is not stored)
USAGE_MARK = "*"


def _money(row: RollupDay) -> dict[str, dict[str, int]]:
    """The refunds and disputes (``DayMoney``/``MonthMoney``): the usage is its own attribute."""
    kept = {c: {k: v for k, v in values.items() if k != USAGE} for c, values in sorted(row.money.items())}
    return {c: values for c, values in kept.items() if values}


def _usage(row: RollupDay) -> dict[str, int]:
    return {USAGE_MARK: 1, **{c: values[USAGE] for c, values in sorted(row.money.items()) if values.get(USAGE)}}


def _read_money(money: Any, usage: Any) -> tuple[dict[str, dict[str, int]], bool]:
    """The money of an item, the usage put back in; and whether the item kept the usage."""
    found = {currency: {name: int(value) for name, value in _plain(values).items()}
             for currency, values in _plain(money).items()}
    if usage is None:
        return found, False
    for currency, amount in _plain(usage).items():
        if currency != USAGE_MARK and int(amount):
            found.setdefault(currency, {})[USAGE] = int(amount)
    return found, True


def rollup_item(row: RollupDay, rebuilt_at: str) -> RevenueRollup:
    month = row.day.isoformat()[:7]
    return RevenueRollup(
        RevenueRollup.pk(month=month), RevenueRollup.sk(day=row.day.isoformat(), shard=f"{row.shard:0{SHARD_DIGITS}d}"),
        Figures={c: dict(v) for c, v in row.figures.items()}, Paying=row.paying, Shards=row.shards,
        DayCounts={k: v for k, v in sorted(row.counts.items()) if v},
        DayMoney=_money(row), Usage=_usage(row), RebuiltAt=rebuilt_at)


def _put_all(rows: Iterable[Row], item: Callable[[Row], BillingItem],
             written: Callable[[Row], None] | None = None) -> int:
    """Put an item for each row (BatchWriteItem, 25 a request, no conditions: the same
    recomputation puts the same items); ``written`` is told of each row once it is queued.
    Returns how many."""
    count = 0
    with BillingItem.batch_write() as batch:
        for row in rows:
            batch.save(item(row))
            count += 1
            if written is not None:
                written(row)
    return count


def write_rollups(rows: Iterable[RollupDay], *, rebuilt_at: str,
                  written: Callable[[RollupDay], None] | None = None) -> int:
    """Put the rows; ``written`` is told of each row once it is queued (a progress bar; a
    test stops a rebuild there). Returns how many."""
    return _put_all(rows, lambda row: rollup_item(row, rebuilt_at), written)


def _row(item: RevenueRollup) -> RollupDay:
    day, shard = item.SK.split("#")
    figures: dict[str, dict[str, int]] = {
        currency: {name: int(value) for name, value in _plain(values).items()}
        for currency, values in _plain(item.Figures).items()}
    money, usage_kept = _read_money(item.DayMoney, item.Usage)
    return RollupDay(date.fromisoformat(day), int(shard), int(item.Shards), figures, int(item.Paying or 0),
                     {name: int(value) for name, value in _plain(item.DayCounts).items()}, money, usage_kept)


def _plain(value: Any) -> dict[str, Any]:
    return value.as_dict() if hasattr(value, "as_dict") else dict(value or {})


def month_rollups(month: str) -> list[RollupDay]:
    """Every kept row of ``month`` (``YYYY-MM``): one Query."""
    return [_row(item) for item in RevenueRollup.query(RevenueRollup.pk(month=month))]


def rollup_rows(months: Iterable[str]) -> Iterator[RollupDay]:
    for month in months:
        yield from month_rollups(month)


# --- a view's days: one item a month and part, ``PK=REVENUE#DAYS#<view>``, ``SK=<YYYY-MM>#<part>``


def _view_days_pk(scope: Scope) -> str:
    return RevenueViewDays.pk(dimension=scope.dimension, value=scope.value)


def view_days_item(month: str, rows: list[RollupDay], rebuilt_at: str, scope: Scope) -> RevenueViewDays:
    """One part's days of ``month`` (``rows``, in order, all of one shard) as one item."""
    days = {row.day.isoformat(): {"figures": row.figures, "paying": row.paying,
                                  "counts": {k: v for k, v in sorted(row.counts.items()) if v},
                                  "money": row.money} for row in rows}
    return RevenueViewDays(_view_days_pk(scope), RevenueViewDays.sk(month=month, shard=f"{rows[0].shard:0{SHARD_DIGITS}d}"),
                           Close=rows[-1].day.isoformat(), Days=days,
                           Shards=rows[0].shards, RebuiltAt=rebuilt_at)


def write_view_days(rows: Iterable[RollupDay], *, rebuilt_at: str, scope: Scope) -> int:
    """Put ``scope``'s days (every day of each month they touch, from its first: an item
    holds its month's days) as one item a month and shard. Returns how many items."""
    by_month: dict[tuple[str, int], list[RollupDay]] = {}
    for row in rows:
        by_month.setdefault((row.day.isoformat()[:7], row.shard), []).append(row)
    # the rows come day by day (``rollups.day_rows``), so each month's are in order
    return _put_all(sorted(by_month.items()), lambda entry: view_days_item(entry[0][0], entry[1], rebuilt_at, scope))


def view_day_rows(first_month: str, last_month: str, scope: Scope) -> list[RollupDay]:
    """``scope``'s kept days of ``first_month``..``last_month``, every part's: one Query (a
    year of months at one part is 13 items)."""
    found = []
    for item in RevenueViewDays.query(_view_days_pk(scope),
                                      RevenueViewDays.SK.between(f"{first_month}#", f"{last_month}#~")):
        shard = int(item.SK.split("#")[1])
        for day, kept in item.Days.items():
            found.append(RollupDay(date.fromisoformat(day), shard, int(item.Shards), kept["figures"],
                                   kept["paying"], kept["counts"], kept["money"]))
    return found


# --- the cohorts: one item per cohort month, ``PK=REVENUE#COHORTS``, ``SK=<YYYY-MM>`` ---------


@dataclass(frozen=True)
class CohortRow:
    """One cohort month as kept: per currency and under ``*`` (any currency), its customers
    and how many of them pay at each month's close since (index 0: its own month's); per
    currency, that currency's cohort's MRR at the same closes. Each month closes on its
    last day or on ``through``, whichever is first."""

    month: str
    through: date
    members: dict[str, int]
    retained: dict[str, list[int]]
    mrr: dict[str, list[int]]
    # The customers it counts: all of them (one shard), or one part's of a rebuild split
    # over ``shards`` processes (``REVENUE_REBUILD_PARTS``), added up on read.
    shard: int = 0
    shards: int = 1


def cohort_item(row: CohortRow, rebuilt_at: str, scope: Scope | None = None) -> RevenueCohort:
    # One part's row has its part in its key; a whole one keeps the key it always had.
    key = (RevenueCohort.sk(month=row.month) if row.shards == 1
           else RevenueCohort.part_sk_template.format(month=row.month, part=f"{row.shard:0{SHARD_DIGITS}d}"))
    return RevenueCohort(_pk(RevenueCohort, scope), key, Through=row.through.isoformat(),
                         Members=dict(row.members), Retained={c: list(v) for c, v in row.retained.items()},
                         Mrr={c: list(v) for c, v in row.mrr.items()}, Shards=row.shards, RebuiltAt=rebuilt_at)


def write_cohorts(rows: Iterable[CohortRow], *, rebuilt_at: str, scope: Scope | None = None) -> int:
    """Put every cohort month (of ``scope``'s partition, or the whole business's). Returns
    how many."""
    return _put_all(rows, lambda row: cohort_item(row, rebuilt_at, scope))


def _cohort(item: RevenueCohort) -> CohortRow:
    month, _, shard = item.SK.partition("#")
    return CohortRow(month, date.fromisoformat(item.Through),
                     {c: int(n) for c, n in _plain(item.Members).items()},
                     {c: [int(n) for n in values] for c, values in _plain(item.Retained).items()},
                     {c: [int(n) for n in values] for c, values in _plain(item.Mrr).items()},
                     int(shard or 0), int(item.Shards or 1))


def cohort_rows(first_month: str, last_month: str, scope: Scope | None = None) -> list[CohortRow]:
    """The kept cohorts of ``first_month``..``last_month`` (``YYYY-MM``), of ``scope`` or
    the whole business, every part's: one Query (a cohort item is a few hundred bytes a year
    of months: a page holds thousands)."""
    return [_cohort(item) for item in RevenueCohort.query(
        _pk(RevenueCohort, scope), RevenueCohort.SK.between(first_month, f"{last_month}#~"))]


def first_month_kept() -> str | None:
    """The whole business's first kept month (``YYYY-MM``), or None: one Query of one item."""
    for item in RevenueMonth.query(RevenueMonth.pk(), limit=1):
        return item.SK.split("#")[0]
    return None


# --- the months: one item per month and shard, ``PK=REVENUE#MONTHS``, ``SK=<YYYY-MM>#<shard>`` --


def month_item(row: RollupDay, rebuilt_at: str, scope: Scope | None = None) -> RevenueMonth:
    """A month's row (``row.day``: the day it closes on; its amounts summed over the month)."""
    return RevenueMonth(
        _pk(RevenueMonth, scope), RevenueMonth.sk(month=row.day.isoformat()[:7], shard=f"{row.shard:0{SHARD_DIGITS}d}"),
        Close=row.day.isoformat(), Figures={c: dict(v) for c, v in row.figures.items()}, Paying=row.paying,
        MonthCounts={k: v for k, v in sorted(row.counts.items()) if v},
        MonthMoney=_money(row), Usage=_usage(row), Shards=row.shards, RebuiltAt=rebuilt_at)


def write_months(rows: Iterable[RollupDay], *, rebuilt_at: str, scope: Scope | None = None) -> int:
    """Put the months' rows (of ``scope``'s partition, or the whole business's). Returns how
    many."""
    return _put_all(rows, lambda row: month_item(row, rebuilt_at, scope))


def _month_row(item: RevenueMonth) -> RollupDay:
    money, usage_kept = _read_money(item.MonthMoney, item.Usage)
    return RollupDay(date.fromisoformat(item.Close), int(item.SK.split("#")[1]), int(item.Shards),
                     {currency: {name: int(value) for name, value in _plain(values).items()}
                      for currency, values in _plain(item.Figures).items()},
                     int(item.Paying or 0),
                     {name: int(value) for name, value in _plain(item.MonthCounts).items()}, money, usage_kept)


def month_rows(first_month: str, last_month: str, scope: Scope | None = None) -> list[RollupDay]:
    """The kept months ``first_month``..``last_month``, every shard, of ``scope`` or the
    whole business: one Query (16 items a month: a few KB each at most, a thousand months
    to a page)."""
    return [_month_row(item) for item in RevenueMonth.query(
        _pk(RevenueMonth, scope), RevenueMonth.SK.between(f"{first_month}#", f"{last_month}#~"))]


# --- the views a split rebuild keeps: one item, ``PK=REVENUE#VIEWS``, ``SK=VIEWS`` -----------


def _view(name: str) -> Scope:
    dimension, _, value = name.partition("#")
    return Scope(dimension, value)


def register_views(scopes: Iterable[Scope]) -> list[Scope]:
    """Add ``scopes`` to the views every part of a split rebuild keeps and return all of
    them: one UpdateItem (an ADD to a set: two parts adding at once both land, and each gets
    back every view added before its own)."""
    names = {f"{scope.dimension}#{scope.value}" for scope in scopes}
    item = RevenueViews(RevenueViews.pk(), RevenueViews.sk())
    if not names:
        return registered_views()
    item.update(actions=[RevenueViews.Views.add(names), RevenueViews.EntityType.set(RevenueViews)])
    return [_view(name) for name in sorted(item.Views or ())]


def registered_views() -> list[Scope]:
    """The views added so far (one GetItem)."""
    return views_listed() or []


def views_listed() -> list[Scope] | None:
    """The views added so far, or None when no rebuild has listed any (none has run since
    the list was kept: one made before it kept the whole business's months, but no list of
    what it kept). One GetItem."""
    try:
        item = RevenueViews.get(RevenueViews.pk(), RevenueViews.sk())
    except RevenueViews.DoesNotExist:
        return None
    return [_view(name) for name in sorted(item.Views or ())]
