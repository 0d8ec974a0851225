"""The one place that writes the due dates a subscription is found by, and the index keys
derived from them.

``NextPaymentDate`` and ``NextReminderDate`` are the schedule's dates (docs/TABLE.md). The
hash keys of GSI-2 and GSI-1 are derived from them: ``DuePaymentKey`` and
``DueReminderKey`` = ``<date>#<shard>``, the shard a stable hash of the subscription id
modulo the table's shard count (``access.due_shards``). Setting a date sets its
key, so the item is in that index on that day; removing both takes it out of the
batches' view (cancel, pause). Every write goes through these functions (a test keeps it
so), so how the keys are derived is decided here and nowhere else.
"""

from __future__ import annotations

import zlib
from datetime import date

from pynamodb.expressions.update import Action

from billing.access.due_shards import due_shard_layout
from billing.models import DUE_KEY, Subscription


def shard_of(sub_id: str, shards: int) -> int:
    """The subscription's shard among ``shards``: CRC-32 of its id, the same in every
    process and Python version (never ``hash()``, which is salted per process)."""
    return zlib.crc32(sub_id.encode()) % shards


def due_key(sub_id: str, day: date, shards: int | None = None) -> str:
    """``<date>#<shard>``: the GSI hash key of ``sub_id`` on ``day`` (default: the count
    new keys are written with now)."""
    count = shards or due_shard_layout().write_shards
    return DUE_KEY.format(day=day.isoformat(), shard=shard_of(sub_id, count))


def next_payment_on(sub_id: str, day: date) -> list[Action]:
    """Update actions: charge on ``day`` (the item is in GSI-2 under that date's key)."""
    return [Subscription.NextPaymentDate.set(day.isoformat()), Subscription.DuePaymentKey.set(due_key(sub_id, day))]


def next_reminder_on(sub_id: str, day: date | None) -> list[Action]:
    """Update actions: remind on ``day`` (the item is in GSI-1 under that date's key);
    None: no reminder (``schedule.renewal_reminder``: a cadence shorter than a month), so
    the item leaves GSI-1 (sparse) and no run reads it for reminders."""
    if day is None:
        return [Subscription.NextReminderDate.remove(), Subscription.DueReminderKey.remove()]
    return [Subscription.NextReminderDate.set(day.isoformat()), Subscription.DueReminderKey.set(due_key(sub_id, day))]


def leave_due_indexes() -> list[Action]:
    """Update actions: no further charge or reminder (both sparse indexes drop the item)."""
    return [Subscription.NextPaymentDate.remove(), Subscription.NextReminderDate.remove(),
            Subscription.DuePaymentKey.remove(), Subscription.DueReminderKey.remove()]


def wait_out_of_due_indexes() -> list[Action]:
    """Update actions: out of both indexes while the first payment waits for the customer
    (``incomplete``): no reminder, never charged by a run. ``NextPaymentDate`` stays the
    first period's day, so that the confirmed charge's advance finds it due there (and puts
    both keys back: ``next_payment_on``, ``next_reminder_on``)."""
    return [Subscription.NextReminderDate.remove(), Subscription.DuePaymentKey.remove(),
            Subscription.DueReminderKey.remove()]


def due_attributes(sub_id: str, next_payment: date, next_reminder: date | None,
                   shards: int | None = None) -> dict[str, str | None]:
    """The same dates and keys as constructor keywords, for a new item (create, bulk load;
    ``shards`` for an item made without a table, such as the Workbench model's samples)."""
    return {"NextPaymentDate": next_payment.isoformat(),
            "NextReminderDate": next_reminder.isoformat() if next_reminder else None,
            "DuePaymentKey": due_key(sub_id, next_payment, shards),
            "DueReminderKey": due_key(sub_id, next_reminder, shards) if next_reminder else None}


def no_due_attributes() -> dict[str, None]:
    """The due dates and keys of an ended item, as attribute values (an in-memory sample)."""
    return {"NextPaymentDate": None, "NextReminderDate": None, "DuePaymentKey": None, "DueReminderKey": None}


def reshard_keys(sub: Subscription, shards: int) -> list[Action]:
    """Update actions for ``migrate_due_shards``: the keys of the item's current dates under
    ``shards`` (the dates themselves do not change)."""
    actions = []
    if sub.NextPaymentDate:
        actions.append(Subscription.DuePaymentKey.set(due_key(sub.sub_id, date.fromisoformat(sub.NextPaymentDate), shards)))
    if sub.NextReminderDate:
        actions.append(Subscription.DueReminderKey.set(due_key(sub.sub_id, date.fromisoformat(sub.NextReminderDate), shards)))
    return actions


def keys_match(sub: Subscription, shards: int) -> bool:
    """Whether the item's keys are the ones ``shards`` gives its dates."""
    for day, key in ((sub.NextPaymentDate, sub.DuePaymentKey), (sub.NextReminderDate, sub.DueReminderKey)):
        if day and key != due_key(sub.sub_id, date.fromisoformat(day), shards):
            return False
    return True
