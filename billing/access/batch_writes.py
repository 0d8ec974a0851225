"""Writes made by billing.batches. Each is one conditional UpdateItem: the condition is
what makes a batch safe to re-run and to run twice at once.
"""

from __future__ import annotations

from datetime import date

from pynamodb.expressions.condition import Condition

from billing.models import Subscription, SubscriptionStatus

from ._common import live
from .subscriptions import update_subscription


def _still_due(sub: Subscription, slot: date) -> Condition:
    return (Subscription.NextPaymentDate == slot.isoformat()) & live()


def advance_after_payment(
    sub: Subscription, *, slot: date, paid_period: date, next_payment: date, next_reminder: date
) -> Subscription:
    """After a successful charge: move to the next anchor date, back to active.

    Only if ``NextPaymentDate`` still equals ``slot`` (the date being processed), so
    that of two runs racing on one item exactly one advances it (ConditionFailed for
    the other). The version is incremented but not checked.
    """
    return update_subscription(
        sub,
        [
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.LastPaymentDate.set(paid_period.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
            Subscription.BillingPeriod.remove(),
            Subscription.RetryCount.set(0),
        ],
        _still_due(sub, slot),
        check_version=False,
    )


def mark_past_due(
    sub: Subscription, *, slot: date, period: date, failed_retries: int, retry_on: date, next_reminder: date
) -> Subscription:
    """After a declined charge: past due, retried on ``retry_on``; ``BillingPeriod``
    remembers the period being paid. Same condition as :func:`advance_after_payment`."""
    return update_subscription(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.PAST_DUE),
            Subscription.BillingPeriod.set(period.isoformat()),
            Subscription.RetryCount.set(failed_retries),
            Subscription.NextPaymentDate.set(retry_on.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
        ],
        _still_due(sub, slot),
        check_version=False,
    )


def claim_reminder(sub: Subscription, *, day: date, next_reminder: date) -> Subscription:
    """Claim the reminder due on ``day`` before sending it: ``NextReminderDate`` moves on
    only if it still equals ``day``, so of two runs exactly one sends the e-mail."""
    return update_subscription(
        sub,
        [
            Subscription.LastReminderDate.set(day.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
        ],
        (Subscription.NextReminderDate == day.isoformat()) & live(),
        check_version=False,
    )
