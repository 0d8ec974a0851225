"""Disputes (chargebacks) of a receipt's charge: the receipt's ``Dispute*`` attributes
with their audit event, and the staff-wide list (``DisputeEntry`` items, partition
``DISPUTES``).

The processor may deliver its events twice, late, or out of order (``closed`` before
``created``). Each write is therefore conditional on what it would change:

* opened: only while the receipt records no dispute, or this same dispute still open
  with another status; never over a closed one.
* closed: only when the receipt does not already record this dispute closed so (or
  records another dispute); it always sets the final status.

The receipt's update, its audit event and the merchant's ``dispute.created`` (the first
time the receipt records the dispute) or ``dispute.closed`` are one transaction, so the
events are written exactly when the receipt changed (a status between the two, e.g.
``under_review``, has no merchant event). The list's entry is written apart (put if absent when
opened; updated when closed), each time the event is handled: a retry after a failure
between the two writes completes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from billing.access._common import iso_now, refused_as, utc_now
from billing.access.credit_notes import (
    CREDIT_NOTE_NUMBERS,
    add_credit_note,
    is_tax_invoice,
    new_credit_note,
    refunds_so_far,
)
from billing.access.events import new_event
from billing.access.outbox import new_merchant_event, save_item
from billing.access.receipt_numbers import write_numbered
from billing.exceptions import ConditionFailed
from billing.models import (
    CLOSED_DISPUTE_STATUSES,
    AuditAction,
    CreditNote,
    DisputeEntry,
    MerchantEventType,
    Receipt,
)
from billing.rules.api_objects import dispute_object
from core.dynamo import engine

DISPUTES_PAGE_SIZE = 200  # the staff list's one Query reads at most this many


@dataclass(frozen=True)
class Dispute:
    """A dispute as the processor describes it (Stripe's Dispute object)."""

    dispute_id: str
    charge_id: str  # the PaymentIntent, as the receipt's ``ChargeId`` holds it
    amount: int  # minor units
    currency: str  # upper case, as rpay stores currencies
    reason: str
    status: str
    opened_at: str  # UTC ISO-8601, the processor's ``created``

    @property
    def closed(self) -> bool:
        return self.status in CLOSED_DISPUTE_STATUSES


def dispute_snapshot(receipt: Receipt) -> dict:
    """The receipt's dispute fields, for audit before/after records."""
    return {"DisputeId": receipt.DisputeId, "DisputeStatus": receipt.DisputeStatus,
            "DisputeReason": receipt.DisputeReason, "DisputeAmount": receipt.DisputeAmount,
            "DisputeOpenedAt": receipt.DisputeOpenedAt, "DisputeClosedAt": receipt.DisputeClosedAt}


def record_dispute(receipt: Receipt, dispute: Dispute, *, actor: str) -> bool:
    """Record on ``receipt`` that ``dispute`` was opened (an open status) or closed (a
    closed one), with its audit event, in one transaction; False when that changed nothing
    (a redelivery, or an "opened" that arrives after the dispute closed). Then make its
    entry in the staff list agree (whether or not the receipt changed)."""
    changed = _update_receipt(receipt, dispute, actor=actor)
    _write_entry(receipt, dispute)
    return changed


def _update_receipt(receipt: Receipt, dispute: Dispute, *, actor: str) -> bool:
    now = iso_now()
    actions = [
        Receipt.DisputeId.set(dispute.dispute_id),
        Receipt.DisputeStatus.set(dispute.status),
        Receipt.DisputeReason.set(dispute.reason or None),
        Receipt.DisputeAmount.set(dispute.amount),
    ]
    if dispute.closed:
        actions += [Receipt.DisputeOpenedAt.set(Receipt.DisputeOpenedAt | dispute.opened_at),
                    Receipt.DisputeClosedAt.set(now)]
        this_or_none = Receipt.DisputeId.does_not_exist() | (Receipt.DisputeId == dispute.dispute_id)
        condition = Receipt.SK.exists() & this_or_none & (
            Receipt.DisputeStatus.does_not_exist() | (Receipt.DisputeStatus != dispute.status))
    else:
        actions.append(Receipt.DisputeOpenedAt.set(dispute.opened_at))
        still_open = ((Receipt.DisputeId == dispute.dispute_id)
                      & ~Receipt.DisputeStatus.is_in(*CLOSED_DISPUTE_STATUSES)
                      & (Receipt.DisputeStatus != dispute.status))
        condition = Receipt.SK.exists() & (Receipt.DisputeStatus.does_not_exist() | still_open)
    before = dispute_snapshot(receipt)
    after = {**before, "DisputeId": dispute.dispute_id, "DisputeStatus": dispute.status,
             "DisputeReason": dispute.reason or None, "DisputeAmount": dispute.amount,
             "DisputeOpenedAt": (receipt.DisputeOpenedAt or dispute.opened_at) if dispute.closed else dispute.opened_at,
             "DisputeClosedAt": now if dispute.closed else receipt.DisputeClosedAt}
    event = new_event(receipt.account_id, actor=actor,
                      action=AuditAction.DISPUTE_CLOSED if dispute.closed else AuditAction.DISPUTE_OPENED,
                      subject=receipt.SK, before=before, after=after,
                      note=f"{dispute.dispute_id}: {dispute.reason or 'no reason given'}"[:500])
    merchant_events = []
    kind = MerchantEventType.DISPUTE_CLOSED if dispute.closed \
        else MerchantEventType.DISPUTE_CREATED if receipt.DisputeId != dispute.dispute_id else None
    if kind is not None:
        data = dispute_object(_entry(receipt, dispute, now))
        merchant_events.append(new_merchant_event(kind, account_id=receipt.account_id, object_type="dispute",
                                                  object_id=dispute.dispute_id, data=data))
    note_of = lost_dispute_credit_note(receipt, dispute)

    def write(transaction: Any, number: str | None = None) -> None:
        transaction.update(receipt, actions, condition=condition)
        transaction.save(event)
        if note_of is not None and number is not None:
            add_credit_note(transaction, note_of(number))
        for merchant_event in merchant_events:
            save_item(transaction, merchant_event)

    try:
        with refused_as(ConditionFailed, receipt.SK):
            if note_of is None:
                with engine.transact_write() as transaction:
                    write(transaction)
            else:  # the credit note's number is taken by this write, or not at all
                write_numbered(CREDIT_NOTE_NUMBERS, utc_now().year, write)
    except ConditionFailed:
        return False
    for name, value in after.items():
        setattr(receipt, name, value)
    return True


def lost_dispute_credit_note(receipt: Receipt, dispute: Dispute) -> Callable[[str], CreditNote] | None:
    """A dispute lost takes the money back as a refund does: what makes the credit note of
    what it took (at most what is left of the charge) given its number, taken by the
    dispute's closing write (a redelivered "lost", refused by the condition, takes none)."""
    if dispute.status != "lost" or receipt.DisputeStatus == "lost" or not is_tax_invoice(receipt):
        return None
    taken = min(int(dispute.amount), int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0))
    if taken <= 0:
        return None
    earlier = refunds_so_far(receipt)
    return lambda number: new_credit_note(receipt, number=number, refund_id=dispute.dispute_id, amount=taken,
                                          earlier=earlier, reason="dispute lost")


def _entry(receipt: Receipt, dispute: Dispute, now: str) -> DisputeEntry:
    """The dispute's entry in the staff-wide list, as ``dispute`` and ``now`` make it."""
    return DisputeEntry(
        DisputeEntry.pk(), DisputeEntry.sk(opened=dispute.opened_at, dispute_id=dispute.dispute_id),
        DisputeId=dispute.dispute_id, AccountId=receipt.account_id, ReceiptSK=receipt.SK,
        ReceiptNumber=receipt.Number, ChargeId=dispute.charge_id, Amount=dispute.amount, Currency=dispute.currency,
        Reason=dispute.reason or None, Status=dispute.status, OpenedAt=dispute.opened_at,
        ClosedAt=now if dispute.closed else None, UpdatedAt=now,
    )


def _write_entry(receipt: Receipt, dispute: Dispute) -> None:
    now = iso_now()
    entry = _entry(receipt, dispute, now)
    try:
        with refused_as(ConditionFailed, entry.SK):
            if not dispute.closed:
                # opened: only if absent (a closed entry, written first, stays closed)
                entry.save(condition=DisputeEntry.SK.does_not_exist())
                return
            # closed: made or brought to its final status; a redelivery changes nothing
            values = {name: getattr(entry, name) for name in (
                "DisputeId", "AccountId", "ReceiptSK", "ReceiptNumber", "ChargeId", "Amount", "Currency", "Reason",
                "Status", "OpenedAt", "ClosedAt")}
            attributes = DisputeEntry.get_attributes()
            entry.update(actions=[
                *(attributes[name].set(value) for name, value in values.items() if value is not None),
                DisputeEntry.UpdatedAt.set(now), DisputeEntry.EntityType.set(DisputeEntry),
            ], condition=DisputeEntry.Status.does_not_exist() | (DisputeEntry.Status != dispute.status))
    except ConditionFailed:
        pass  # there already, as it should be


def list_disputes(*, limit: int = DISPUTES_PAGE_SIZE) -> list[DisputeEntry]:
    """Every recorded dispute, newest opened first, at most ``limit``: one Query."""
    return list(DisputeEntry.query(DisputeEntry.pk(), scan_index_forward=False, limit=limit))
