"""Bulk writes for demo seeding, tests and benchmarks: a due-subscription builder and
BatchWriteItem, no conditions."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

from billing.access.due_dates import due_attributes
from billing.models import BillingItem, PaymentDetails, Subscription, SubscriptionStatus


def due_subscription(
    account_id: str,
    sub_id: str,
    *,
    due: date,
    card: PaymentDetails,
    sku: str = "NEWS-DAILY",
    product_name: str = "Daily News",
    email: str | None = None,
    payment_day: int | None = None,
    amount: int = 999,
    currency: str = "USD",
    reminder: date | None = None,
    reminder_days_before: int = 7,
    language: str | None = None,
    shards: int | None = None,
) -> Subscription:
    """A live subscription (not yet written) due to pay on ``due``, paid a month before
    and reminded ``reminder_days_before`` days before: what a month of batches leaves.
    ``shards``: the count its index keys are made for (default: the table's)."""
    return Subscription(
        Subscription.pk(account_id=account_id),
        Subscription.sk(sub_id=sub_id, sku=sku),
        Email=email or f"{sub_id}@example.com",
        SKU=sku,
        ProductName=product_name,
        PaymentDay=payment_day or due.day,
        PaymentAmount=amount,
        Currency=currency,
        **due_attributes(sub_id, due, reminder or due - timedelta(days=reminder_days_before), shards),
        LastPaymentDate=(due - timedelta(days=31)).isoformat(),
        PaidThroughDate=(due - timedelta(days=1)).isoformat(),
        LastReminderDate=(due - timedelta(days=31 + reminder_days_before)).isoformat(),
        PaymentDetails=card,
        CreatedDate="2026-01-01T00:00:00+00:00",
        Status=SubscriptionStatus.ACTIVE,
        RetryCount=0,
        Language=language,
        Version=1,
    )


def batch_items(items: Iterable[BillingItem]) -> None:
    """Write many items at once (demo seeding, benchmarks): BatchWriteItem."""
    with BillingItem.batch_write() as batch:
        for item in items:
            batch.save(item)
