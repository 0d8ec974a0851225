"""The revenue rollups (docs/ANALYTICS.md, "Kept figures"): one item per day and shard,
``PK=REVENUE#<YYYY-MM>``, ``SK=<YYYY-MM-DD>#<shard>``. Written by ``revenue_rebuild`` with
BatchWriteItem (no conditions: every key and value is fixed by the recomputation, so
writing a day again puts the same item); a month is read with one Query (paged by
DynamoDB only past 1 MB: 31 days of 16 shards is far below)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from billing.models import BillingItem, RevenueRollup

SHARD_DIGITS = 2


@dataclass(frozen=True)
class RollupDay:
    """What one shard kept for one day."""

    day: date
    shard: int
    shards: int
    figures: dict[str, dict[str, int]]  # currency -> figure -> value
    paying: int


def rollup_item(row: RollupDay, rebuilt_at: str) -> RevenueRollup:
    month = row.day.isoformat()[:7]
    return RevenueRollup(
        RevenueRollup.pk(month=month), RevenueRollup.sk(day=row.day.isoformat(), shard=f"{row.shard:0{SHARD_DIGITS}d}"),
        Figures={c: dict(v) for c, v in row.figures.items()}, Paying=row.paying, Shards=row.shards,
        RebuiltAt=rebuilt_at)


def write_rollups(rows: Iterable[RollupDay], *, rebuilt_at: str,
                  written: Callable[[RollupDay], None] | None = None) -> int:
    """Put the rows (BatchWriteItem, 25 a request); ``written`` is told of each row once
    it is queued (a progress bar; a test stops a rebuild there). Returns how many."""
    count = 0
    with BillingItem.batch_write() as batch:
        for row in rows:
            batch.save(rollup_item(row, rebuilt_at))
            count += 1
            if written is not None:
                written(row)
    return count


def _row(item: RevenueRollup) -> RollupDay:
    day, shard = item.SK.split("#")
    figures: dict[str, dict[str, int]] = {
        currency: {name: int(value) for name, value in _plain(values).items()}
        for currency, values in _plain(item.Figures).items()}
    return RollupDay(date.fromisoformat(day), int(shard), int(item.Shards), figures, int(item.Paying or 0))


def _plain(value: Any) -> dict[str, Any]:
    return value.as_dict() if hasattr(value, "as_dict") else dict(value or {})


def month_rollups(month: str) -> list[RollupDay]:
    """Every kept row of ``month`` (``YYYY-MM``): one Query."""
    return [_row(item) for item in RevenueRollup.query(RevenueRollup.pk(month=month))]


def rollup_rows(months: Iterable[str]) -> Iterator[RollupDay]:
    for month in months:
        yield from month_rollups(month)
