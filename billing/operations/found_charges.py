"""A successful charge found without its receipt, by the reconciliation
(billing/batches/reconcile.py) or by a processor's webhook (billing/actions/webhooks.py),
recorded as the payment path records it (docs/MONEY.md M2): its receipt, audit event and
receipt e-mail, the subscription paid through the period whatever its state, a cancelled
one included. A charge that bought nothing is recorded and refunded in full, never kept:
an upgrade whose switch was not made (``refunds.refund_unapplied_switch``), and the first
payment of a subscription that did not start (the customer was told it failed, or its
confirmation came after it expired), under the M5 key ``refund:<ChargeId>:unstarted``,
with the refund e-mail. Each step is conditional or keyed, so two finders recording the
same charge record it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings

from billing import access
from billing.models import Receipt, Subscription, SubscriptionStatus
from billing.operations.expiry import expire
from billing.operations.final_usage import USAGE_KIND, record_usage_charge
from billing.operations.payments import record_paid_charge
from billing.operations.refunds import refund_receipt, refund_unapplied_switch
from billing.rules.lifecycle import is_expired_incomplete
from core.clock import billing_today
from core.money import format_with_code
from core.payments.errors import PaymentError
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

# The cancel reason of a subscription whose first charge's outcome was unknown at subscribe.
NOT_STARTED = "first_payment_failed"
UNSTARTED_REFUND = "unstarted"  # the request id of its refund: key refund:<ChargeId>:unstarted


@dataclass
class Difference:
    """What a reconciliation (or a webhook) found about one charge or receipt, and whether
    it was fixed."""

    # "missing receipt", "charge of a subscription that did not start", "receipt differs",
    # "receipt without charge", "unidentified charge"
    kind: str
    detail: str
    fixed: bool = False

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" + (" (fixed)" if self.fixed else "")


def describe_charge(charge: ChargeResult) -> str:
    """A charge in a difference's line: its id, amount, day and what its metadata names."""
    meta = charge.metadata
    return (f"charge {charge.charge_id} {format_with_code(charge.amount, charge.currency)} on {charge.created[:10]}, "
            f"account {meta.get('account_id', '?')} sub {meta.get('sub_id', '?')} "
            f"period {meta.get('period_start', meta.get('billing_date', '?'))}..{meta.get('period_end', '?')}")


def today_of(charge: ChargeResult) -> date:
    """The billing day a charge was made on (its invoice's day)."""
    try:
        return billing_today(settings.BILLING_TIMEZONE, datetime.fromisoformat(charge.created))
    except (TypeError, ValueError):
        return billing_today(settings.BILLING_TIMEZONE)


def is_billings(charge: ChargeResult) -> bool:
    """A subscription's charge: the shop's checkout charges name their own source and are
    the shop's to reconcile (``reconcile_checkouts``)."""
    return charge.metadata.get("source", "billing") == "billing"


def subscription_receipt(charge: ChargeResult) -> tuple[str | None, Receipt | None]:
    """The receipt key a subscription's charge names, and the receipt if recorded (one
    GetItem): (None, None) for a charge that is not a subscription's."""
    meta = charge.metadata
    if not is_billings(charge) or not {"account_id", "sub_id", "sku", "period_start"} <= meta.keys():
        return None, None
    key = Receipt.sk(billing_date=meta["period_start"], sku=meta["sku"], sub_id=meta["sub_id"])
    return key, access.get_receipt(meta["account_id"], key)


def record_found_charge(charge: ChargeResult, today: date, *, actor: str,
                        gateway: PaymentGateway | None = None) -> Difference:
    """A charge found without its receipt (by a webhook, say), recorded as the
    reconciliation records it: the receipt, or the full refund of a subscription that did
    not start. The returned difference says what was done (``fixed``)."""
    difference = Difference("missing receipt", describe_charge(charge))
    record_missing_receipt(charge, today, difference, gateway or get_gateway(), actor=actor)
    return difference


def record_missing_receipt(charge: ChargeResult, today: date, difference: Difference, gateway: PaymentGateway,
                           actor: str = "reconcile") -> None:
    """Record ``charge``, whose receipt is missing, and say in ``difference`` what was done
    (``fixed``, or why not): the payment path's own record, or the full refund of a charge
    whose switch was not made or whose subscription never started. Raises what the engine
    or the gateway raise (the reconciliation counts it and the next run tries again)."""
    meta = charge.metadata
    sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"])
    if sub is None:
        difference.detail += "; no such subscription: refund it"
        return
    if "period_end" not in meta:
        difference.detail += "; the charge does not say which days it paid for"
        return
    if meta.get("kind") == USAGE_KIND:
        # The usage a cancellation billed (billing/operations/final_usage.py): its own
        # receipt, never a period's payment (that would advance a cancelled subscription).
        record_usage_charge(sub, charge, actor=actor)
        difference.fixed = True
        return
    if meta.get("kind") in ("switch", "seats"):
        # An upgrade's (or more seats') charge whose change was never recorded (the page
        # died after the charge, or the subscription changed meanwhile): the customer got
        # nothing for it, so it is recorded and refunded in full, never kept.
        difference.kind = "charge of a switch not made"
        refunded = refund_unapplied_switch(sub, charge, actor=actor)
        if refunded is None:
            difference.detail += "; refund not made yet"
            return
        difference.detail += f"; refunded {format_with_code(refunded, charge.currency)}" if refunded else ""
        difference.fixed = True
        return
    if is_expired_incomplete(sub):
        # Confirmed with the bank too late (the customer was told it expired): expired
        # now if no run did it yet, and refunded as a subscription that never started.
        expire(sub, actor=actor, gateway=gateway)
        sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"]) or sub
    if _never_started(sub):
        difference.kind = "charge of a subscription that did not start"
        _refund_unstarted(sub, charge, difference, gateway, actor)
        return
    record_paid_charge(sub, charge, run_date=today, actor=actor)
    difference.fixed = True


def _never_started(sub: Subscription) -> bool:
    """Its first payment's outcome was unknown at subscribing, or it expired unconfirmed
    (``incomplete_expired``): the customer was told it did not start."""
    return (sub.Status == SubscriptionStatus.CANCELLED and sub.CancelReason == NOT_STARTED) \
        or sub.Status == SubscriptionStatus.INCOMPLETE_EXPIRED


def _refund_unstarted(sub: Subscription, charge: ChargeResult, difference: Difference,
                      gateway: PaymentGateway, actor: str = "reconcile") -> None:
    """The customer was told the first payment failed, and may have subscribed again: the
    charge is recorded (so M2 holds: one receipt, marked refunded) and refunded in full;
    the refund e-mail is the one message. The subscription stays as it is: it never started."""
    start = date.fromisoformat(charge.metadata["period_start"])
    end = date.fromisoformat(charge.metadata["period_end"])
    receipt, _ = access.create_receipt(
        sub, billing_date=start, amount=charge.amount, currency=charge.currency, charge_id=charge.charge_id,
        retention_days=settings.RECEIPT_RETENTION_DAYS, period_end=end, actor=actor,
        tax=access.invoice_tax(sub, amount=charge.amount, on=today_of(charge), metadata=charge.metadata))
    left = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    if left <= 0:
        difference.fixed = True
        return
    try:
        refund_receipt(receipt, left, request_id=UNSTARTED_REFUND, actor=actor, gateway=gateway,
                       reason="subscription did not start")
    except PaymentError as error:  # audited by refund_receipt; the next run tries the same key again
        difference.detail += f"; refund not made: {error}"
        return
    difference.detail += f"; refunded {format_with_code(left, charge.currency)}"
    difference.fixed = True
