"""An account's payment history: its receipts and its failed payment attempts, in one
Query of its partition.

Receipts (``REC#<BillingDate>...``) and audit events (``EVT#<At>...``) share the
account's partition, and no other kind of item sorts between ``EVT#`` and ``REC#``
today; so one Query over ``SK between EVT#<from> and REC#<to>~`` reads both, and a
filter keeps the receipts of the window and the events that record a failed attempt
(a declined charge, or a subscription ended because its payment failed). The filter
saves bandwidth, not reads: every event since ``from`` is read (a few per month).

The same Query runs on to ``SUB#~``: nothing else of the account sorts between ``REC#``
and ``SUB#`` either, so it reads the account's subscriptions too (a few items), from
which the receipt of each period still in force that began before the window (a
yearly's) is read by key (``receipts_in_force``), with no other Query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from billing.access._common import absent_if_invalid, is_expired, utc_now
from billing.models import AuditAction, AuditEvent, BillingItem, Receipt, Subscription

# The cancellation reasons that mean "the payment failed" (billing.operations.payments).
PAYMENT_FAILURE_REASONS = ("payment_failed", "first_payment_declined", "first_payment_not_confirmed",
                           "incomplete_expired")
# The events that end a subscription, for one of those reasons.
ENDING_ACTIONS = (AuditAction.SUBSCRIPTION_CANCELLED, AuditAction.SUBSCRIPTION_EXPIRED)


@dataclass(frozen=True)
class FailedAttempt:
    """One declined charge, as its audit event recorded it."""

    at: str  # UTC ISO-8601, when the attempt was made
    sub_id: str
    sku: str
    product: str
    period: str | None  # the first day of the period it tried to pay
    amount: int | None  # minor units; None on events written before it was recorded
    currency: str | None
    card: str | None  # "Visa ****4242"
    reason: str  # the gateway's decline code, or why the subscription ended
    ended: bool  # no retry left: the subscription was cancelled


@dataclass
class PaymentHistory:
    receipts: list[Receipt]  # newest first
    failed: list[FailedAttempt]  # newest first
    subscriptions: list[Subscription] = field(default_factory=list)  # the account's, any state


def failed_attempt(event: AuditEvent) -> FailedAttempt | None:
    """The failed attempt an event records, or None if it records something else."""
    ended = event.Action in ENDING_ACTIONS
    if event.Action != AuditAction.PAYMENT_DECLINED and not (ended and event.Note in PAYMENT_FAILURE_REASONS):
        return None
    try:
        ids = Subscription.sk_template.parse(event.Subject or "")
    except ValueError:
        return None
    after, before = event.After or {}, event.Before or {}
    return FailedAttempt(
        at=event.At, sub_id=ids["sub_id"], sku=ids["sku"],
        product=after.get("Product") or after.get("ProductName") or before.get("ProductName") or ids["sku"],
        period=after.get("BillingPeriod") or before.get("BillingPeriod") or before.get("NextPaymentDate"),
        amount=after.get("Amount"), currency=after.get("Currency") or before.get("Currency"),
        card=before.get("Card"), reason=event.Note or "declined", ended=ended,
    )


@absent_if_invalid(lambda: PaymentHistory([], []))
def get_payment_history(account_id: str, start: date, end: date, *, now: datetime | None = None) -> PaymentHistory:
    """Receipts billed from ``start`` to ``end`` (unexpired) and failed attempts made
    since ``start``, newest first, and the account's subscriptions: one Query (DynamoDB
    pages past 1 MB)."""
    now = now or utc_now()
    event_prefix = AuditEvent.sk_template.prefix
    is_receipt = ((BillingItem.EntityType == Receipt)
                  & (Receipt.BillingDate >= start.isoformat()) & (Receipt.BillingDate <= end.isoformat())
                  & (Receipt.TTL.does_not_exist() | (now < Receipt.TTL)))
    is_failure = ((BillingItem.EntityType == AuditEvent)
                  & ((AuditEvent.Action == str(AuditAction.PAYMENT_DECLINED))
                     | (AuditEvent.Action.is_in(*(str(a) for a in ENDING_ACTIONS))
                        & AuditEvent.Note.is_in(*PAYMENT_FAILURE_REASONS))))
    items = BillingItem.query(
        Receipt.pk(account_id=account_id),
        BillingItem.SK.between(f"{event_prefix}{start.isoformat()}", f"{Subscription.sk_template.prefix}~"),
        filter_condition=is_receipt | is_failure | (BillingItem.EntityType == Subscription),
        scan_index_forward=False,
    )
    history = PaymentHistory([], [])
    for item in items:
        if isinstance(item, Receipt):
            if not is_expired(item, now):
                history.receipts.append(item)
        elif isinstance(item, Subscription):
            history.subscriptions.append(item)
        elif isinstance(item, AuditEvent) and (attempt := failed_attempt(item)) is not None:
            history.failed.append(attempt)
    return history
