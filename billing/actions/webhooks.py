"""What rpay does with the payment processor's events (``/webhooks/stripe/``).

Each handler is safe to run twice (a redelivery, or a retry after a failure): it writes
only what is missing, through the paths the payment run and the staff use, so an event
never half-applies and never records money twice.

* ``payment_intent.succeeded``: a subscription's charge without a receipt gets one (M2:
  a payment whose receipt write was lost, or a charge the customer confirmed with their
  bank and never came back from), by the reconciliation's own path.
* ``charge.refunded``: a refund made at the processor (Stripe's dashboard) is recorded
  on its receipt, audited and e-mailed (M5, M6), once per refund.

Any other type is answered and left alone (``ignored``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from billing import access
from billing.actions.disputes import dispute_closed, dispute_created
from billing.actions.refunds import record_processor_refund
from billing.batches.reconcile import is_billings, record_found_charge
from billing.models import Receipt
from core.payments.gateway import ChargeResult, get_gateway
from core.payments.stripe.webhooks import charge_from_intent

ACTOR = "stripe"  # the audit events' actor for what the processor told us


class NotYetRecorded(Exception):
    """The event is about a charge rpay has not recorded yet: answered 500, so the
    processor delivers it again later (it retries for three days)."""


def receive_event(event: dict[str, Any], *, today: date) -> tuple[str, str]:
    """Claim a verified event (its item, keyed by its ``created`` day and time and its id),
    handle it, mark how it ended: (status, outcome). ``replay`` for an event handled or
    ignored before (nothing done); a handler's failure is marked ``failed`` and raised (a
    redelivery handles it again, counted in the item's ``Attempts``)."""
    item, new = access.claim_webhook(event["id"], event["type"], access.event_time(event.get("created")))
    if not new and item.Status in ("done", "ignored"):
        return "replay", item.Outcome or ""
    try:
        status, outcome = handle_event(event, today=today)
    except Exception as error:
        access.finish_webhook(item, "failed", f"{type(error).__name__}: {error}", again=not new)
        raise
    access.finish_webhook(item, status, outcome, again=not new)
    return status, outcome


def handle_event(event: dict[str, Any], *, today: date) -> tuple[str, str]:
    """(status, outcome) of one verified event: ``done`` or ``ignored``. Raises when it
    could not be handled (the caller answers 500: the processor retries)."""
    handler = HANDLERS.get(event["type"])
    if handler is None:
        return "ignored", f"{event['type']}: not an event rpay acts on"
    return handler(event["data"]["object"], today)


def _subscription_receipt(charge: ChargeResult) -> tuple[str | None, Receipt | None]:
    """The receipt key a subscription's charge names, and the receipt if recorded (one GetItem)."""
    meta = charge.metadata
    if not is_billings(charge) or not {"account_id", "sub_id", "sku", "period_start"} <= meta.keys():
        return None, None
    key = Receipt.sk(billing_date=meta["period_start"], sku=meta["sku"], sub_id=meta["sub_id"])
    return key, access.get_receipt(meta["account_id"], key)


def _succeeded(intent: dict[str, Any], today: date) -> tuple[str, str]:
    charge = charge_from_intent(intent)
    key, receipt = _subscription_receipt(charge)
    if key is None:
        return "ignored", f"{charge.charge_id}: not a subscription's charge (a shop order's is finished by its own path)"
    if receipt is not None:
        return "done", f"{charge.charge_id}: receipt {receipt.Number or receipt.SK} recorded already"
    meta = charge.metadata
    if access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"]) is None:
        # Nothing a redelivery could change: the reconciliation reports it to staff.
        return "ignored", f"{charge.charge_id}: no subscription {meta['sub_id']} (reconcile_payments reports it)"
    found = record_found_charge(charge, today, actor=ACTOR)
    if not found.fixed:
        raise NotYetRecorded(found.line())
    return "done", found.line()


def _refunded(charge_object: dict[str, Any], today: date) -> tuple[str, str]:
    intent_id = charge_object.get("payment_intent")
    if not isinstance(intent_id, str) or not intent_id:
        return "ignored", "a refund of a charge that no PaymentIntent made"
    gateway = get_gateway()
    charge = gateway.charge_status(intent_id)
    key, receipt = _subscription_receipt(charge)
    if key is None:
        return "ignored", f"{intent_id}: not a subscription's charge"
    if receipt is None:
        raise NotYetRecorded(f"{intent_id}: refunded, but its receipt is not recorded yet")
    added = []
    for refund in gateway.refunds_of(intent_id):
        if any(r.RefundId == refund.refund_id for r in receipt.Refunds or []):
            continue  # made by rpay (a staff refund), or recorded by an earlier delivery
        if record_processor_refund(receipt, refund.refund_id, refund.amount, actor=ACTOR):
            added.append(refund)
        receipt = access.get_receipt(receipt.account_id, receipt.SK) or receipt
    if not added:
        return "done", f"{intent_id}: every refund recorded already"
    return "done", f"{intent_id}: recorded refund(s) {', '.join(r.refund_id for r in added)}"


HANDLERS: dict[str, Callable[[dict[str, Any], date], tuple[str, str]]] = {
    "payment_intent.succeeded": _succeeded,
    "charge.refunded": _refunded,
    "charge.dispute.created": dispute_created,
    "charge.dispute.closed": dispute_closed,
}
