"""The staff's look ahead: what the batches will do on each of the coming days."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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


def get_upcoming(start: date, days: int = 30,
                 amount_of: Callable[[Subscription], int] | None = None,
                 charges_of: Callable[[Subscription], Iterable[tuple[date, int]]] | None = None) -> list[UpcomingDay]:
    """Per day from ``start``: one Query of GSI-2 (amounts are needed, so items are read)
    and one ``Select=COUNT`` Query of GSI-1 (only the number of reminders is shown).
    ``charges_of``: each payment a due item will make, ``(date, amount)``, from the one it
    is due for on (the staff page gives the payment run's own walk, ``rules.projection``):
    one whose next payment also falls in the window (a period of 28-30 days) is counted on
    each day, at each payment's own amount. Else ``amount_of``: what a due item will be
    charged, once; default its price."""
    amount_of = amount_of or (lambda sub: int(sub.PaymentAmount))
    charges_of = charges_of or (lambda sub: [(date.fromisoformat(sub.NextPaymentDate), amount_of(sub))])
    upcoming = [UpcomingDay(day=start + timedelta(days=offset)) for offset in range(days)]
    for entry in upcoming:
        for sub in get_due_payments_by_date(entry.day):
            for day, amount in charges_of(sub):
                offset = (day - start).days
                if not 0 <= offset < days:
                    continue
                later = upcoming[offset]
                later.payments += 1
                later.totals[sub.Currency] = later.totals.get(sub.Currency, 0) + amount
        entry.reminders = count_due_reminders_by_date(entry.day)
    return upcoming
