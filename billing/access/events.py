"""The audit trail: who changed what on an account, with before/after snapshots.

The access functions that change a subscription or record a charge write their own
event (Zulip's ``RealmAuditLog`` habit), so no caller can forget it; ``audited_change``
remains for changes made outside them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from billing.access._common import absent_if_invalid, new_id, utc_now
from billing.models import AuditAction, AuditEvent, Subscription


def subscription_snapshot(sub: Subscription) -> dict:
    """The fields staff and customers care about, for audit before/after records."""
    return {
        "Status": sub.Status,
        "ProductName": sub.ProductName,  # what the customer's list of failed attempts names
        # The product it is of now (a switch changes it; the key keeps the first one's): the
        # revenue figures filter by it.
        "SKU": sub.SKU,
        "PaymentDay": sub.PaymentDay,
        "PaymentAmount": sub.PaymentAmount,
        "Currency": sub.Currency,
        "NextPaymentDate": sub.NextPaymentDate,
        "NextReminderDate": sub.NextReminderDate,
        "PaidThroughDate": sub.PaidThroughDate,
        "BillingPeriod": sub.BillingPeriod,
        "RetryCount": sub.RetryCount,
        "CancelMode": sub.CancelMode,
        "PausedFrom": sub.PausedFrom,
        "PausedUntil": sub.PausedUntil,
        "Card": f"{sub.PaymentDetails.Brand} ****{sub.PaymentDetails.Last4}" if sub.PaymentDetails else None,
        # The wallet card it pays with; None on one made before the wallet.
        "CardId": sub.PaymentDetails.CardId if sub.PaymentDetails else None,
        # A coupon, only when it has one (events before coupons keep their shape).
        **({"Coupon": sub.CouponCode, "CouponPaymentsLeft": sub.CouponPaymentsLeft} if sub.CouponCode else {}),
        # A free trial's last free day, only on a subscription that had one.
        **({"TrialEnd": sub.TrialEnd} if sub.TrialEnd else {}),
        # Its cadence, only when not monthly: the revenue figures count a month's share of it.
        **({"Interval": sub.Interval, "IntervalCount": sub.IntervalCount} if sub.Interval else {}),
    }


def new_event(
    account_id: str,
    *,
    actor: str,
    action: AuditAction | str,
    subject: str | None = None,
    before: dict | None = None,
    after: dict | None = None,
    note: str | None = None,
) -> AuditEvent:
    """An event item, not yet written (to join a transaction, or to save)."""
    now = utc_now()
    at = now.isoformat(timespec="seconds")
    return AuditEvent(
        AuditEvent.pk(account_id=account_id),
        AuditEvent.sk(at=at, event_id=_ordered_id(now.microsecond)),
        At=at, Actor=actor, Action=str(action), Subject=subject, Before=before, After=after, Note=note,
    )


# Events made by this process within one microsecond (a clock that did not move).
_made = itertools.count()


def _ordered_id(microsecond: int) -> str:
    """An event's id, which orders the events of one second (``At`` is to the second, and
    the key sorts by ``At``, then by this): the microsecond, a count for events made within
    one microsecond by this process, then random bits, apart (no long run of digits a
    scanner could take for a card number). The events of one subscription
    within a second (a cancel and a "keep" sent by a script) read back in the order they
    were made, so the revenue history takes the last one's state as the day's (its writes
    are serialised by the subscription's version: across hosts, the order holds as long as
    their clocks differ by less than the time between the two writes)."""
    return f"{microsecond:06d}.{next(_made) % 1_000_000:06d}.{new_id()[:8]}"


def record_event(account_id: str, **fields: Any) -> AuditEvent:
    """Write an audit event now: ``new_event``'s fields (actor, action, subject, before,
    after, note)."""
    event = new_event(account_id, **fields)
    event.save()
    return event


@contextmanager
def audited_change(sub: Subscription, *, actor: str, action: AuditAction | str) -> Iterator[None]:
    """Record the change the block makes to ``sub`` as an event with before/after
    snapshots. Nothing is recorded when the block raises: the change did not happen."""
    before = subscription_snapshot(sub)
    yield
    record_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                 before=before, after=subscription_snapshot(sub))


@absent_if_invalid(list)
def get_events_by_account(account_id: str, *, limit: int = 100) -> list[AuditEvent]:
    return list(
        AuditEvent.query(
            AuditEvent.pk(account_id=account_id),
            AuditEvent.SK.startswith(AuditEvent.sk_template.prefix),
            scan_index_forward=False,
            limit=limit,
        )
    )
