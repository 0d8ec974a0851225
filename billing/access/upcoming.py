"""The staff's look ahead: what the batches will do on each of the coming days."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from billing.access.due_shards import due_keys
from billing.access.subscriptions import get_due_payments_by_date
from billing.models import Subscription


@dataclass
class UpcomingDay:
    """What the batches will do on one day: payments due (count, totals) and reminders."""

    day: date
    payments: int = 0
    totals: dict[str, int] = field(default_factory=dict)  # currency -> minor units
    reminders: int = 0


def count_due_payments_by_date(day: date, *, shards: Sequence[int] | None = None) -> int:
    """How many payments are due on ``day``: a ``Select=COUNT`` Query of GSI-2 per shard (no
    items read back; a batch's progress bar knows its total before it starts)."""
    return sum(Subscription.due_payments.count(key) for key in due_keys(day, shards))


def count_due_reminders_by_date(day: date, *, shards: Sequence[int] | None = None) -> int:
    """How many reminders are due on ``day``: a ``Select=COUNT`` Query of GSI-1 per shard."""
    return sum(Subscription.due_reminders.count(key) for key in due_keys(day, shards))


def get_upcoming(start: date, days: int = 30, *,
                 amount: Callable[[Subscription], int] | None = None) -> list[UpcomingDay]:
    """Per day from ``start``: one Query of GSI-2 (amounts are needed, so items are read)
    and one ``Select=COUNT`` Query of GSI-1 (only the number of reminders is shown).
    ``amount``: what a due item will be charged (the staff page passes the payment run's
    own ``batches.owed_amount``, from GSI-2's projection; default the monthly price)."""
    amount = amount or (lambda sub: int(sub.PaymentAmount))
    upcoming = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        entry = UpcomingDay(day=day)
        for sub in get_due_payments_by_date(day):
            entry.payments += 1
            entry.totals[sub.Currency] = entry.totals.get(sub.Currency, 0) + amount(sub)
        entry.reminders = count_due_reminders_by_date(day)
        upcoming.append(entry)
    return upcoming
