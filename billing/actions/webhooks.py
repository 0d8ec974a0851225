"""What rpay does with the payment processor's events (``/webhooks/stripe/``).

Each handler is safe to run twice (a redelivery, or a retry after a failure): it writes
only what is missing, through the paths the payment run and the staff use, so an event
never half-applies and never records money twice.

* ``payment_intent.succeeded``: a subscription's charge without a receipt gets one (M2:
  a payment whose receipt write was lost, or a charge the customer confirmed with their
  bank and never came back from), by the reconciliation's own path.
* ``payment_intent.payment_failed``: a renewal's charge awaiting the customer's bank that
  the bank refused is forgotten (the next retry charges anew); any other is noted.
* ``charge.refunded``: a refund made at the processor (Stripe's dashboard) is recorded
  on its receipt, audited and e-mailed (M5, M6), once per refund.
* ``payment_method.automatically_updated`` / ``payment_method.detached``: the wallet and
  the subscriptions' card copies (``billing.actions.card_events``).

Any other type is answered and left alone (``ignored``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from billing import access
from billing.actions.card_events import bank_updated_card, card_detached
from billing.actions.disputes import dispute_closed, dispute_created
from billing.models import SubscriptionStatus
from billing.operations.found_charges import is_billings, record_found_charge, subscription_receipt
from billing.operations.refunds import record_processor_refund
from core.payments.gateway import get_gateway
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
    if getattr(handler, "takes_event", False):  # needs more than the object (card_events.whole_event)
        return handler(event, today)
    return handler(event["data"]["object"], today)


def _succeeded(intent: dict[str, Any], today: date) -> tuple[str, str]:
    charge = charge_from_intent(intent)
    key, receipt = subscription_receipt(charge)
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
    key, receipt = subscription_receipt(charge)
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


def _failed(intent: dict[str, Any], today: date) -> tuple[str, str]:
    """A PaymentIntent that failed. A renewal's charge that was waiting for the customer's
    bank (action required) and that the bank then refused is forgotten, so that the next
    retry charges anew; asked first how it stands now, since events come out of order (a
    second, successful confirmation is recorded). Any other failure was answered to the
    caller when the charge was made, and dunning acts on it: noted only."""
    charge = charge_from_intent(intent)
    meta = charge.metadata
    if not is_billings(charge) or not {"account_id", "sub_id", "sku"} <= meta.keys():
        return "ignored", f"{charge.charge_id}: not a subscription's charge"
    sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"])
    if sub is None or sub.PaymentDetails.AwaitingCharge != charge.charge_id:
        return "done", f"{charge.charge_id}: failed ({charge.decline_code or 'declined'}); dunning has it in hand"
    now = get_gateway().charge_status(charge.charge_id)
    if now.succeeded:
        found = record_found_charge(now, today, actor=ACTOR)
        return "done", f"{charge.charge_id}: failed once, then confirmed: {found.line()}"
    if now.needs_authentication:
        return "done", f"{charge.charge_id}: the customer may still confirm it"
    if sub.Status in (SubscriptionStatus.INCOMPLETE, SubscriptionStatus.INCOMPLETE_EXPIRED):
        # A first payment: kept on the subscription, so its Finish payment page says the
        # bank refused and ends it (or the expiry does); there is no retry to charge anew.
        return "done", f"{charge.charge_id}: a first payment the bank refused; the subscription never starts"
    try:
        access.forget_awaiting_charge(sub, charge.charge_id)
    except access.ConditionFailed:
        return "done", f"{charge.charge_id}: no longer awaited"
    return "done", f"{charge.charge_id}: the bank refused the customer's confirmation; the next retry charges anew"


HANDLERS: dict[str, Callable[[dict[str, Any], date], tuple[str, str]]] = {
    "payment_intent.succeeded": _succeeded,
    "payment_intent.payment_failed": _failed,
    "charge.refunded": _refunded,
    "payment_method.automatically_updated": bank_updated_card,
    "payment_method.detached": card_detached,
    "charge.dispute.created": dispute_created,
    "charge.dispute.closed": dispute_closed,
}
