"""A subscription brought in with its past (the demo's revenue history): its audit events
written with the times they happened, each carrying the snapshot the revenue figures read
a subscription's states from (billing/analytics/history.py), and the item itself as it
stands today. BatchWriteItem, no conditions: the caller fixes every key (event ids
included), so writing the same past again puts the same items."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from billing.access.bulk import batch_items
from billing.models import AuditAction, AuditEvent, PaymentDetails, Subscription, SubscriptionStatus


@dataclass(frozen=True)
class PastChange:
    at: datetime  # when it happened (UTC)
    action: AuditAction
    after: dict  # the subscription's snapshot after it (access.subscription_snapshot's shape)
    before: dict | None = None


def past_events(sub: Subscription, changes: Sequence[PastChange], *, actor: str) -> list[AuditEvent]:
    events = []
    for n, change in enumerate(changes):
        at = change.at.isoformat()
        events.append(AuditEvent(
            AuditEvent.pk(account_id=sub.account_id), AuditEvent.sk(at=at, event_id=f"past-{sub.sub_id}-{n:03d}"),
            At=at, Actor=actor, Action=str(change.action), Subject=sub.SK, Before=change.before, After=change.after))
    return events


def ended_subscription(account_id: str, sub_id: str, *, sku: str, product_name: str, email: str, payment_day: int,
                       amount: int, currency: str, created: datetime, paid_through: date) -> Subscription:
    """A subscription cancelled in the past (not yet written): no due dates, so no run
    ever picks it up; the card it paid with is a record of brand and last digits only (its
    token names nothing at the processor: it pays nothing any more)."""
    return Subscription(
        Subscription.pk(account_id=account_id), Subscription.sk(sub_id=sub_id, sku=sku),
        Email=email, SKU=sku, ProductName=product_name, PaymentDay=payment_day, PaymentAmount=amount,
        Currency=currency, PaidThroughDate=paid_through.isoformat(), CreatedDate=created.isoformat(),
        Status=SubscriptionStatus.CANCELLED, CancelMode="now", RetryCount=0, Version=1,
        PaymentDetails=PaymentDetails(Token=f"ended-{sub_id}", Brand="visa", Last4="4242", ExpMonth=12,
                                      ExpYear=created.year + 3))


def write_subscription_past(sub: Subscription, changes: Sequence[PastChange], *, actor: str,
                            created: datetime, item: bool = False) -> None:
    """Write ``changes`` as ``sub``'s audit events, and date the subscription from
    ``created``: the whole item when ``item`` (one made here, as ``ended_subscription``),
    else only its ``CreatedDate`` (a live one the demo subscribed through the portal's path)."""
    batch_items([sub, *past_events(sub, changes, actor=actor)] if item else past_events(sub, changes, actor=actor))
    if not item:
        sub.update(actions=[Subscription.CreatedDate.set(created.isoformat())])
