"""The write of a change a customer may pay for at once (a switch of product, more seats):
one TransactWriteItems with the subscription's update on the change's own condition, its
audit event, the merchant's events and, when it charged, its numbered receipt (its number
taken in the same transaction, billing/access/receipt_numbers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.conf import settings

from billing.access._common import refused_as, utc_now
from billing.access.outbox import save_item
from billing.access.receipt_numbers import RECEIPT_NUMBERS, write_numbered
from billing.access.receipts import build_receipt
from billing.access.tax_ledger import InvoiceTax, add_receipt_totals, invoice_tax
from billing.exceptions import ConditionFailed
from billing.models import AuditEvent, Receipt, ReceiptNumberLookup, Subscription
from billing.rules.seat_lines import LineSeats
from core.clock import billing_today
from core.dynamo import engine


@dataclass
class PaidChange:
    """A change's charge, as its write records it: whether it charged (``charge_id`` and
    an amount), when it was processed, its tax, and the receipt once written."""

    sub: Subscription
    charge_id: str | None
    charged: int
    charging: bool
    processed_at: datetime
    tax: InvoiceTax | None
    written: list[Receipt] = field(default_factory=list)

    def receipt(self, number: str, *, today: date, period_end: date, actor: str, sku: str, product_name: str,
                kind: str, retention_days: int, seats: LineSeats | None = None,
                ) -> tuple[Receipt, ReceiptNumberLookup]:
        """The change's numbered receipt (``kind``: switch, seats), today to ``period_end``,
        keyed under ``sku``; kept as ``written``. ``seats``: the several seats its line pays
        for (a switch's, which keeps them; a change of seats', from how many)."""
        assert self.tax is not None, "a receipt is written only for a charge, whose tax paid_change worked out"
        receipt, lookup, _ = build_receipt(
            self.sub, billing_date=today, amount=self.charged, currency=self.sub.Currency, charge_id=self.charge_id,
            retention_days=retention_days, period_end=period_end, actor=actor, sku=sku, tax=self.tax,
            product_name=product_name, kind=kind, number=number, processed_at=self.processed_at, seats=seats)
        self.written[:] = [receipt]
        return receipt, lookup

    @property
    def written_receipt(self) -> Receipt | None:
        return self.written[0] if self.written else None


def paid_change(sub: Subscription, *, charge_id: str | None, charged: int, tax: InvoiceTax | None) -> PaidChange:
    """The prelude of a change paid at once (a switch, more seats): it charges when it has
    a charge of an amount; its tax is the one given (the charge's metadata's), else the
    tax included in the amount on the processing day."""
    charging = bool(charge_id and charged > 0)
    processed_at = utc_now()
    tax = tax or (invoice_tax(sub, amount=charged, on=billing_today(settings.BILLING_TIMEZONE, processed_at))
                  if charging else None)
    return PaidChange(sub, charge_id, charged, charging, processed_at, tax)


def no_switch_pending(today: date) -> Any:
    """The condition that no switch of product waits for the next payment: no
    ``SwitchFrom``, or one on or before ``today`` (the day a switch took effect stays on
    the item: ``rules.switch.switch_pending``)."""
    return Subscription.SwitchFrom.does_not_exist() | (Subscription.SwitchFrom <= today.isoformat())


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
