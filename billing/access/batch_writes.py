"""Writes made by billing.batches. Each is one conditional write: the condition is what
makes a batch safe to re-run and to run twice at once.
"""

from __future__ import annotations

from datetime import date, timedelta

from pynamodb.expressions.condition import Condition

from billing.access._common import live
from billing.access.due_dates import next_payment_on, next_reminder_on
from billing.access.events import record_event, subscription_snapshot
from billing.access.subscriptions import update_subscription
from billing.models import COUPON_ATTRIBUTES, AuditAction, Subscription, SubscriptionStatus
from billing.rules.coupons import after_payment


def _still_due(slot: date) -> Condition:
    """Still live and still due on ``slot``: of two runs racing on one item, one wins."""
    return (Subscription.NextPaymentDate == slot.isoformat()) & live()


def advance_after_payment(
    sub: Subscription,
    *,
    slot: date,
    paid_period: date,
    next_payment: date,
    next_reminder: date,
    paid_through: date | None = None,
    coupon_used: str | None = None,
) -> Subscription:
    """After a successful charge for ``paid_period``..``paid_through``: paid through that
    day, next payment the day after it, back to active.

    Only if ``NextPaymentDate`` still equals ``slot`` (the date being processed), so
    that of two runs racing on one item exactly one advances it (ConditionFailed for
    the other). The version is incremented but not checked. The charge's own audit event
    was written with its receipt (``create_receipt``).

    ``coupon_used``: the coupon the charge was discounted by (its metadata); when it is
    still the subscription's, one of its payments is used in this same update (no request
    of its own), and at the last one its attributes go.
    """
    paid_through = paid_through or next_payment - timedelta(days=1)
    return update_subscription(
        sub,
        [
            *next_payment_on(sub.sub_id, next_payment),
            Subscription.LastPaymentDate.set(paid_period.isoformat()),
            Subscription.PaidThroughDate.set(paid_through.isoformat()),
            *next_reminder_on(sub.sub_id, next_reminder),
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
            Subscription.BillingPeriod.remove(),
            Subscription.RetryCount.set(0),
            # Paid: no charge waits for the customer's bank any more (one that did is this one)
            *([Subscription.PaymentDetails.AwaitingCharge.remove()] if sub.PaymentDetails.AwaitingCharge else []),
            *_coupon_payment_used(sub, coupon_used),
        ],
        # An incomplete subscription's first charge, confirmed, starts it (and puts it
        # back in both indexes); an expired one never starts (its charge is refunded).
        (Subscription.NextPaymentDate == slot.isoformat())
        & (live() | (Subscription.Status == SubscriptionStatus.INCOMPLETE)),
        check_version=False,
    )


def _coupon_payment_used(sub: Subscription, coupon_used: str | None) -> list:
    """The actions that use one of the coupon's payments (none for a coupon forever)."""
    if not coupon_used or sub.CouponCode != coupon_used or sub.CouponPaymentsLeft is None:
        return []
    left = after_payment(sub.CouponPaymentsLeft)
    if left:
        return [Subscription.CouponPaymentsLeft.set(left)]
    return [getattr(Subscription, name).remove() for name in COUPON_ATTRIBUTES]


def extend_after_cancel(sub: Subscription, *, paid_period: date, paid_through: date) -> Subscription:
    """A charge that succeeded after its subscription was cancelled (docs/MONEY.md M2): the
    customer paid for ``paid_period``..``paid_through``, so the service runs to that day.
    Only if the subscription is cancelled and was paid through the day before
    ``paid_period`` (so a repeat changes nothing: ConditionFailed)."""
    before = subscription_snapshot(sub)
    condition = ((Subscription.Status == SubscriptionStatus.CANCELLED)
                 & (Subscription.PaidThroughDate == (paid_period - timedelta(days=1)).isoformat()))
    update_subscription(sub, [Subscription.PaidThroughDate.set(paid_through.isoformat()),
                              Subscription.LastPaymentDate.set(paid_period.isoformat())],
                        condition, check_version=False)
    record_event(sub.account_id, actor="batch", action=AuditAction.PAID_AFTER_CANCEL, subject=sub.SK,
                 before=before, after=subscription_snapshot(sub))
    return sub


def mark_past_due(
    sub: Subscription,
    *,
    slot: date,
    period: date,
    failed_retries: int,
    retry_on: date,
    next_reminder: date,
    decline_code: str = "declined",
    actor: str = "batch",
    amount: int | None = None,
    awaiting_charge: str | None = None,
) -> Subscription:
    """After a declined charge: past due, retried on ``retry_on``; ``BillingPeriod``
    remembers the period being paid. Same condition as :func:`advance_after_payment`;
    records its ``payment.declined`` event (with the amount tried and the product, for
    the customer's payment history).

    ``awaiting_charge``: the charge was not declined but waits for the cardholder to
    confirm it with their bank (``payment.action_required``): ``retry_on`` is then the day
    the run reminds them. It is kept on the card it was made with, only if the
    subscription still pays with that card (a card replaced meanwhile is charged anew)."""
    before = subscription_snapshot(sub)
    condition = _still_due(slot)
    if awaiting_charge:
        card = [Subscription.PaymentDetails.AwaitingCharge.set(awaiting_charge)]
        condition &= Subscription.PaymentDetails.Token == sub.PaymentDetails.Token
    else:
        card = [Subscription.PaymentDetails.AwaitingCharge.remove()] if sub.PaymentDetails.AwaitingCharge else []
    update_subscription(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.PAST_DUE),
            Subscription.BillingPeriod.set(period.isoformat()),
            Subscription.RetryCount.set(failed_retries),
            *next_payment_on(sub.sub_id, retry_on),
            *next_reminder_on(sub.sub_id, next_reminder),
            *card,
        ],
        condition,
        check_version=False,
    )
    after = {**subscription_snapshot(sub), "Amount": amount, "Product": sub.ProductName}
    action = AuditAction.PAYMENT_ACTION_REQUIRED if awaiting_charge else AuditAction.PAYMENT_DECLINED
    record_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                 before=before, after=after, note=awaiting_charge and f"{decline_code} {awaiting_charge}" or decline_code)
    return sub


def forget_awaiting_charge(sub: Subscription, charge_id: str) -> Subscription:
    """The charge the subscription waited on will not be confirmed (the bank refused the
    customer, or it was cancelled): the next retry charges anew. Only if it still names
    that charge (ConditionFailed otherwise: already paid, or replaced)."""
    return update_subscription(sub, [Subscription.PaymentDetails.AwaitingCharge.remove()],
                               Subscription.PaymentDetails.AwaitingCharge == charge_id, check_version=False)


def claim_reminder(sub: Subscription, *, day: date, next_reminder: date) -> Subscription:
    """Claim the reminder due on ``day`` before sending it: ``NextReminderDate`` moves on
    only if it still equals ``day``, so of two runs exactly one sends the e-mail."""
    return update_subscription(
        sub,
        [
            Subscription.LastReminderDate.set(day.isoformat()),
            *next_reminder_on(sub.sub_id, next_reminder),
        ],
        (Subscription.NextReminderDate == day.isoformat()) & live(),
        check_version=False,
    )
