"""``migrate_due_shards``' steps: record the move to another shard count, rewrite each live
subscription's index keys, record the new count.

No Scan: the subscriptions are found the way the batches find them, by the due index per
date (GSI-2, every shard the table may hold then), over a horizon of dates that holds every
live subscription's ``NextPaymentDate``. Each step is safe to repeat and to kill: the
record says a migration runs (writers then use the new count, readers read both), a key
already right is left alone, and an item changed meanwhile was given its keys by that
change, under the new count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing.access._common import iso_now, live, refused_as
from billing.access.due_dates import keys_match, reshard_keys
from billing.access.due_shards import DueShardLayout, forget_due_shard_layout, read_due_shard_layout
from billing.access.subscriptions import get_due_payments_by_date, update_subscription
from billing.exceptions import ConditionFailed, MigrationConflict
from billing.models import Subscription, TableMeta


def begin_due_shards_migration(to: int) -> DueShardLayout:
    """Record that the table moves to ``to`` shards (again, if a killed run left it so)."""
    if to < 1:
        raise ValueError("a shard count is at least 1")
    meta = TableMeta(TableMeta.pk(), TableMeta.sk())
    condition = TableMeta.PK.exists() & (TableMeta.MigratingTo.does_not_exist() | (TableMeta.MigratingTo == to))
    with refused_as(MigrationConflict, meta.PK):
        meta.update(actions=[TableMeta.MigratingTo.set(to), TableMeta.UpdatedAt.set(iso_now())], condition=condition)
    forget_due_shard_layout()
    return read_due_shard_layout()


def finish_due_shards_migration(to: int) -> DueShardLayout:
    """Record ``to`` as the table's count, once every key has been rewritten."""
    meta = TableMeta(TableMeta.pk(), TableMeta.sk())
    with refused_as(MigrationConflict, meta.PK):
        meta.update(actions=[TableMeta.DueShards.set(to), TableMeta.MigratingTo.remove(),
                             TableMeta.UpdatedAt.set(iso_now())],
                    condition=TableMeta.MigratingTo == to)
    forget_due_shard_layout()
    return read_due_shard_layout()


@dataclass
class ReshardCount:
    found: int = 0
    rewritten: int = 0
    changed_meanwhile: int = 0


def reshard_day(day: date, to: int) -> ReshardCount:
    """Rewrite the keys of every subscription due to pay on ``day`` for ``to`` shards (both
    keys: GSI-2 projects ``NextReminderDate`` and ``DueReminderKey``). One conditional
    UpdateItem per item whose keys are not already right."""
    count = ReshardCount()
    for sub in get_due_payments_by_date(day):
        count.found += 1
        if keys_match(sub, to):
            continue
        # Only if the dates are still the ones read: a change since then wrote its own
        # keys, with the new count (writers use it while the migration is recorded).
        condition = (Subscription.NextPaymentDate == sub.NextPaymentDate) & live()
        if sub.NextReminderDate:
            condition &= Subscription.NextReminderDate == sub.NextReminderDate
        try:
            update_subscription(sub, reshard_keys(sub, to), condition, check_version=False)
        except ConditionFailed:
            count.changed_meanwhile += 1
            continue
        count.rewritten += 1
    return count
