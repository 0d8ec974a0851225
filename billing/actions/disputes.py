"""Disputes (chargebacks): Stripe's ``charge.dispute.created`` and ``charge.dispute.closed``
events, recorded on the receipt of the subscription's charge (its ``Dispute*``
attributes and an audit event, once) and in the staff-wide list of disputes.

Registered in ``billing.actions.webhooks.HANDLERS``; like every handler there, each is
safe to run twice and in any order (billing/access/disputes.py says how). The receipt is
found as the other handlers find it: the PaymentIntent's metadata names it (one request
to the processor, one GetItem). A dispute of a charge whose receipt is not recorded yet
answers 500, so the processor delivers it again later; a charge that is not a
subscription's (the shop's) is ignored here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from billing import access, notify
from billing.access.disputes import Dispute
from billing.models import Receipt
from billing.operations.found_charges import subscription_receipt
from core.dynamo.keys import InvalidKey, check_id
from core.money import format_with_code
from core.payments.gateway import get_gateway

ACTOR = "stripe"  # the audit events' actor for what the processor told us


class DisputeBeforeReceipt(Exception):
    """A dispute of a charge rpay has not recorded yet: answered 500 (as the webhooks'
    ``NotYetRecorded``), so the processor delivers it again."""


def dispute_from_object(obj: dict[str, Any]) -> tuple[Dispute | None, str]:
    """The event's Dispute object as a ``Dispute``, or None and why it cannot be one."""
    dispute_id = str(obj.get("id") or "")
    intent = obj.get("payment_intent")
    if isinstance(intent, dict):  # expanded
        intent = intent.get("id")
    if not isinstance(intent, str) or not intent:
        # Older API versions name only the charge (``ch_…``); rpay's receipts hold the
        # PaymentIntent, and every charge rpay makes has one.
        return None, f"{dispute_id or 'a dispute'}: names no payment_intent (an older API version), not looked up"
    try:  # both go into keys (the staff list's): a malformed one is no dispute of ours
        check_id("dispute id", dispute_id)
        check_id("payment_intent", intent)
    except InvalidKey as error:
        return None, f"not a dispute rpay can record: {error}"
    created = obj.get("created")
    opened = (datetime.fromtimestamp(int(created), tz=UTC) if isinstance(created, int | float)
              else datetime.now(tz=UTC)).isoformat(timespec="seconds")
    return Dispute(dispute_id=dispute_id, charge_id=intent, amount=int(obj.get("amount") or 0),
                   currency=str(obj.get("currency") or "").upper(), reason=str(obj.get("reason") or ""),
                   status=str(obj.get("status") or ""), opened_at=opened), ""


def _handle(obj: dict[str, Any], *, closing: bool) -> tuple[str, str]:
    dispute, why = dispute_from_object(obj)
    if dispute is None:
        return "ignored", why
    if not dispute.dispute_id or not dispute.status:
        return "ignored", f"{dispute.charge_id}: a dispute without an id or a status"
    if closing != dispute.closed:
        # e.g. a "closed" event whose status is still open: record what it says, no more
        label = "closed" if closing else "created"
        why = f" ({label} event with status {dispute.status})"
    key, receipt = subscription_receipt(get_gateway().charge_status(dispute.charge_id))
    if key is None:
        return "ignored", f"{dispute.dispute_id}: {dispute.charge_id} is not a subscription's charge"
    if receipt is None:
        raise DisputeBeforeReceipt(f"{dispute.dispute_id}: {dispute.charge_id} disputed, its receipt not recorded yet")
    changed = access.record_dispute(receipt, dispute, actor=ACTOR)
    name = receipt.Number or receipt.SK
    if not changed:
        return "done", f"{dispute.dispute_id}: receipt {name} records it already ({receipt.DisputeStatus}){why}"
    if dispute.closed and dispute.status == "lost":
        _send_dispute_credit_note(receipt, dispute)
    what = f"closed, {dispute.status}" if dispute.closed else f"opened, {dispute.status}"
    amount = format_with_code(dispute.amount, receipt.Currency)
    return "done", f"{dispute.dispute_id}: dispute {what} on receipt {name} ({dispute.reason}, {amount}){why}"


def _send_dispute_credit_note(receipt: Receipt, dispute: Dispute) -> None:
    """A lost dispute took money back: the credit note its write issued (docs/TAX.md,
    "Credit notes") goes to the customer as a refund's does. Only from the delivery that
    recorded the loss (a redelivery changes nothing and sends nothing); one Query."""
    note = next((n for n in access.credit_notes_of_receipt(receipt) if n.RefundId == dispute.dispute_id), None)
    if note is not None:
        notify.send_credit_note(note, email=receipt.Email or None)


def dispute_created(obj: dict[str, Any], today: date) -> tuple[str, str]:
    """``charge.dispute.created``: the receipt's dispute opened (never over a closed one)."""
    return _handle(obj, closing=False)


def dispute_closed(obj: dict[str, Any], today: date) -> tuple[str, str]:
    """``charge.dispute.closed``: the dispute's outcome (won, lost) on the receipt."""
    return _handle(obj, closing=True)
