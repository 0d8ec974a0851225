"""The one place that writes the due dates a subscription is found by.

``NextPaymentDate`` and ``NextReminderDate`` are the hash keys of GSI-2 and GSI-1 (DESIGN.md
§2): setting one puts the item in that index on that day, removing both takes it out of
the batches' view (cancel, pause). Every write goes through these functions, so a change
to how the index keys are derived from the dates (and the subscription's id, which they
all take) is made here and nowhere else.
"""

from __future__ import annotations

from datetime import date

from pynamodb.expressions.update import Action

from billing.models import Subscription


def next_payment_on(sub_id: str, day: date) -> list[Action]:
    """Update actions: charge on ``day`` (the item is in GSI-2 under that date)."""
    return [Subscription.NextPaymentDate.set(day.isoformat())]


def next_reminder_on(sub_id: str, day: date) -> list[Action]:
    """Update actions: remind on ``day`` (the item is in GSI-1 under that date)."""
    return [Subscription.NextReminderDate.set(day.isoformat())]


def leave_due_indexes() -> list[Action]:
    """Update actions: no further charge or reminder (both sparse indexes drop the item)."""
    return [Subscription.NextPaymentDate.remove(), Subscription.NextReminderDate.remove()]


def due_attributes(sub_id: str, next_payment: date, next_reminder: date) -> dict[str, str]:
    """The same dates as constructor keywords, for a new item (create, bulk load)."""
    return {"NextPaymentDate": next_payment.isoformat(), "NextReminderDate": next_reminder.isoformat()}
