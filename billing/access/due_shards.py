"""How many write shards the due indexes have, as recorded with the table, and
the parallel Query over a date's shards.

The count is a table-level fact, not a per-process choice: two processes that disagreed
would write one date's items under keys the other never reads. So it lives in the
table's ``META#TABLE`` item (written by ``setup_dynamodb``), each process reads it once
and keeps it (re-read after ``REFRESH``, so a migration reaches long-lived web
processes), and ``settings.DUE_SHARDS`` is only checked against it: a mismatch is one
clear error in every command, and a warning in the log of any other process.

While ``migrate_due_shards`` runs, the record holds both counts: writers use the new
one, readers read ``max(old, new)`` shards. A key ``<date>#<k>`` has ``k`` below the count
it was written with, so those shards hold every item of the date under either count.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from django.conf import settings
from pynamodb.exceptions import DoesNotExist

from billing.access._common import iso_now, refused_as
from billing.exceptions import AlreadyExists, DueShardsMismatch
from billing.models import DUE_KEY, BillingItem, TableMeta

log = logging.getLogger(__name__)

# How long a process trusts the count it read. ``migrate_due_shards`` waits this long
# (twice, to be safe) after recording a migration, before it rewrites keys.
REFRESH = 60.0
# Threads per date Query over many shards: enough to overlap the round trips.
QUERY_THREADS = 8


@dataclass(frozen=True)
class DueShardLayout:
    """The recorded count, and the count being migrated to (if a migration runs)."""

    shards: int
    migrating_to: int | None = None

    @property
    def write_shards(self) -> int:
        """The count new keys are written with."""
        return self.migrating_to or self.shards

    @property
    def read_shards(self) -> int:
        """How many shards a date's Query must read to see every item."""
        return max(self.shards, self.migrating_to or 0)

    def accepts(self, setting: int) -> bool:
        return setting in (self.shards, self.migrating_to)

    def describe(self) -> str:
        if self.migrating_to:
            return f"{self.shards} shard(s), migrating to {self.migrating_to}"
        return f"{self.shards} shard(s)"


_cache: dict[tuple[str, str | None], tuple[float, DueShardLayout]] = {}
_cache_lock = threading.Lock()
_warned: set[tuple[str, str | None, int]] = set()


def _table_id() -> tuple[str, str | None]:
    return BillingItem.Meta.table_name, BillingItem.Meta.host


def _layout_of(meta: TableMeta) -> DueShardLayout:
    return DueShardLayout(int(meta.DueShards), int(meta.MigratingTo) if meta.MigratingTo else None)


def _remember(layout: DueShardLayout) -> DueShardLayout:
    with _cache_lock:
        _cache[_table_id()] = (time.monotonic(), layout)
    return layout


def read_due_shard_layout() -> DueShardLayout:
    """The table's record, read now (one consistent GetItem); ``DueShardsMismatch`` if absent."""
    try:
        meta = TableMeta.get(TableMeta.pk(), TableMeta.sk(), consistent_read=True)
    except DoesNotExist:
        raise DueShardsMismatch(
            f"table {BillingItem.Meta.table_name} records no due-index shard count: "
            "run manage.py setup_dynamodb") from None
    return _remember(_layout_of(meta))


def due_shard_layout() -> DueShardLayout:
    """The table's layout as this process knows it (read at most every ``REFRESH`` s)."""
    with _cache_lock:
        cached = _cache.get(_table_id())
    if cached is not None and time.monotonic() - cached[0] < REFRESH:
        return cached[1]
    layout = read_due_shard_layout()
    key = (*_table_id(), settings.DUE_SHARDS)
    if not layout.accepts(settings.DUE_SHARDS) and key not in _warned:
        _warned.add(key)
        log.warning("%s", due_shards_mismatch_message(layout))
    return layout


def due_shards_mismatch_message(layout: DueShardLayout) -> str:
    return (f"DUE_SHARDS={settings.DUE_SHARDS} but table {BillingItem.Meta.table_name} records "
            f"{layout.describe()}: set DUE_SHARDS={layout.write_shards}, or change the table with "
            f"manage.py migrate_due_shards --to {settings.DUE_SHARDS}")


def check_due_shards() -> DueShardLayout:
    """For commands: the table's layout, read now; ``DueShardsMismatch`` (one line) when
    ``settings.DUE_SHARDS`` is neither its count nor the count being migrated to."""
    layout = read_due_shard_layout()
    if not layout.accepts(settings.DUE_SHARDS):
        raise DueShardsMismatch(due_shards_mismatch_message(layout))
    return layout


def record_due_shards(count: int) -> DueShardLayout:
    """Record ``count`` with a table that has no record yet (``setup_dynamodb``); a table
    that has one keeps it (returned: the caller compares). Safe to repeat."""
    if count < 1:
        raise ValueError("DUE_SHARDS is at least 1")
    meta = TableMeta(TableMeta.pk(), TableMeta.sk(), DueShards=count, UpdatedAt=iso_now())
    try:
        with refused_as(AlreadyExists, meta.PK):
            meta.save(condition=TableMeta.PK.does_not_exist())
    except AlreadyExists:
        return read_due_shard_layout()
    return _remember(DueShardLayout(count))


def forget_due_shard_layout() -> None:
    """Drop what this process remembers (tests; after a migration in the same process)."""
    with _cache_lock:
        _cache.clear()


def shards_to_read(shards: Sequence[int] | None) -> list[int]:
    """The given shards, or every shard a date's items may be under now."""
    return list(range(due_shard_layout().read_shards)) if shards is None else sorted(set(shards))


def due_keys(day: date, shards: Sequence[int] | None) -> list[str]:
    """The GSI hash keys of ``day`` in the given shards (default: all)."""
    return [DUE_KEY.format(day=day.isoformat(), shard=shard) for shard in shards_to_read(shards)]


Item = TypeVar("Item")
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def parallel_items(sources: list[Callable[[], Iterable[Item]]], *, threads: int = QUERY_THREADS,
                   buffer: int = 2000, identity: Callable[[Any], Any] | None = None) -> Iterator[Item]:
    """The items of several Queries, read in parallel by a small thread pool, as one
    iterator. Lazy: at most ``buffer`` items are read ahead (producers wait for the
    consumer). A Query's error is raised to the consumer. ``identity`` drops repeats (an
    item that moved shard during a migration may show in two Queries)."""
    if len(sources) == 1 and identity is None:
        yield from sources[0]()
        return
    if not sources:
        return
    channel: queue.Queue = queue.Queue(maxsize=buffer)
    closed = threading.Event()

    def put(value: object) -> bool:
        while not closed.is_set():
            try:
                channel.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce(source: Callable[[], Iterable[Item]]) -> None:
        try:
            for item in source():
                if not put(item):
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            put(_Failed(error))
        finally:
            put(_END)

    pool = ThreadPoolExecutor(max_workers=max(1, min(threads, len(sources))), thread_name_prefix="rpay-shard")
    for source in sources:
        pool.submit(produce, source)
    seen: set = set()
    try:
        ended = 0
        while ended < len(sources):
            value = channel.get()
            if value is _END:
                ended += 1
            elif isinstance(value, _Failed):
                raise value.error
            elif identity is None:
                yield value
            else:
                key = identity(value)
                if key not in seen:
                    seen.add(key)
                    yield value
    finally:
        closed.set()
        pool.shutdown(wait=False, cancel_futures=True)
