"""The write of a change a customer may pay for at once (a switch of product, more seats):
one TransactWriteItems with the subscription's update on the change's own condition, its
audit event, the merchant's events and, when it charged, its numbered receipt (its number
taken in the same transaction, billing/access/receipt_numbers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from billing.access._common import refused_as
from billing.access.outbox import save_item
from billing.access.receipt_numbers import RECEIPT_NUMBERS, write_numbered
from billing.access.tax_ledger import add_receipt_totals
from billing.exceptions import ConditionFailed
from billing.models import AuditEvent, Receipt, ReceiptNumberLookup, Subscription
from core.dynamo import engine


def save_change(tx: Any, sub: Subscription, *, actions: list[Any], condition: Any, event: AuditEvent,
                receipt: Receipt | None, lookup: ReceiptNumberLookup | None, merchant_events: Iterable[Any]) -> None:
    """The change's items in ``tx``. The business ``condition``, not the version: a
    reminder claimed meanwhile must not undo a change whose charge is made (PynamoDB still
    moves the version on). ``actions`` is copied: PynamoDB adds the version's own action to
    the list it is given, and a retried transaction builds again."""
    tx.update(sub, actions=list(actions), condition=condition, add_version_condition=False)
    tx.save(event)
    if receipt is not None and lookup is not None:
        tx.save(receipt, condition=Receipt.SK.does_not_exist())
        tx.save(lookup, condition=ReceiptNumberLookup.SK.does_not_exist())
        add_receipt_totals(tx, receipt)
    for merchant_event in merchant_events:
        save_item(tx, merchant_event)


def commit_change(sub: Subscription, write: Callable[..., None], *, charging: bool, processed_at: datetime) -> None:
    """Run ``write(tx[, number])`` once: with a receipt number of the year when the change
    charged, else in a plain transaction. A failed condition is ``ConditionFailed`` on the
    subscription."""
    with refused_as(ConditionFailed, sub.SK):
        if charging:
            write_numbered(RECEIPT_NUMBERS, processed_at.year, write)
        else:
            with engine.transact_write() as tx:
                write(tx)
