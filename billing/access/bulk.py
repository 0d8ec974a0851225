"""Bulk writes for demo seeding and benchmarks: BatchWriteItem, no conditions."""

from __future__ import annotations

from collections.abc import Iterable

from billing.models import BillingItem


def batch_items(items: Iterable[BillingItem]) -> None:
    """Write many items at once (demo seeding, benchmarks): BatchWriteItem."""
    with BillingItem.batch_write() as batch:
        for item in items:
            batch.save(item)
