"""Writes made by billing.batches. Each is one conditional write (an UpdateItem, or a
TransactWriteItems with the audit and merchant events the change carries): the condition
is what makes a batch safe to re-run and to run twice at once.
"""

from __future__ import annotations

from datetime import date, timedelta

from pynamodb.expressions.condition import Condition

from billing.access._common import live
from billing.access.due_dates import next_payment_on, next_reminder_on
from billing.access.outbox import payment_attempt_event, preview, subscription_event, transact_update
from billing.access.subscriptions import audited_items, update_subscription
from billing.exceptions import ConditionFailed
from billing.models import (
    COUPON_ATTRIBUTES,
    AuditAction,
    MerchantEvent,
    MerchantEventType,
    Subscription,
    SubscriptionStatus,
)
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
    next_reminder: date | None,
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

    A renewal's advance is one UpdateItem (its ``payment.succeeded`` was written with the
    receipt). The first payment of a subscription (``paid_period`` is its
    ``LastPaymentDate``: nothing was paid yet) starts it: the update and its
    ``subscription.activated`` event are one TransactWriteItems, on the further condition
    that it is still unpaid, so the request count stays two per payment either way.
    """
    paid_through = paid_through or next_payment - timedelta(days=1)
    actions = [
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
    ]
    # An incomplete subscription's first charge, confirmed, starts it (and puts it
    # back in both indexes); an expired one never starts (its charge is refunded).
    condition = (Subscription.NextPaymentDate == slot.isoformat()) \
        & (live() | (Subscription.Status == SubscriptionStatus.INCOMPLETE))
    if sub.LastPaymentDate != paid_period.isoformat():
        return update_subscription(sub, actions, condition, check_version=False)
    activated = subscription_event(MerchantEventType.SUBSCRIPTION_ACTIVATED, preview(sub, actions))
    return transact_update(sub, actions, condition & (Subscription.LastPaymentDate == paid_period.isoformat()),
                           items=[activated], check_version=False)


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
    ``paid_period`` (so a repeat changes nothing: ConditionFailed). With its audit event
    and ``subscription.updated`` (its service runs longer), in one transaction."""
    condition = ((Subscription.Status == SubscriptionStatus.CANCELLED)
                 & (Subscription.PaidThroughDate == (paid_period - timedelta(days=1)).isoformat()))
    actions = [Subscription.PaidThroughDate.set(paid_through.isoformat()),
               Subscription.LastPaymentDate.set(paid_period.isoformat())]
    return transact_update(sub, actions, condition, check_version=False, items=audited_items(
        sub, actions, actor="batch", action=AuditAction.PAID_AFTER_CANCEL,
        event=MerchantEventType.SUBSCRIPTION_UPDATED))


def mark_past_due(
    sub: Subscription,
    *,
    slot: date,
    period: date,
    failed_retries: int,
    retry_on: date,
    next_reminder: date | None,
    decline_code: str = "declined",
    actor: str = "batch",
    amount: int | None = None,
    awaiting_charge: str | None = None,
    charge_id: str | None = None,
    period_end: date | None = None,
) -> Subscription:
    """After a declined charge: past due, retried on ``retry_on``; ``BillingPeriod``
    remembers the period being paid. Same condition as :func:`advance_after_payment`;
    records its ``payment.declined`` event (with the amount tried and the product, for
    the customer's payment history).

    ``awaiting_charge``: the charge was not declined but waits for the cardholder to
    confirm it with their bank (``payment.action_required``): ``retry_on`` is then the day
    the run reminds them. It is kept on the card it was made with, only if the
    subscription still pays with that card (a card replaced meanwhile is charged anew).

    One transaction: the update, its audit event and the merchant's ``payment.failed``
    (or ``payment.action_required``) for the charge ``charge_id`` of ``amount``."""
    condition = _still_due(slot)
    if awaiting_charge:
        card = [Subscription.PaymentDetails.AwaitingCharge.set(awaiting_charge)]
        condition &= Subscription.PaymentDetails.Token == sub.PaymentDetails.Token
    else:
        card = [Subscription.PaymentDetails.AwaitingCharge.remove()] if sub.PaymentDetails.AwaitingCharge else []
    actions = [
        Subscription.Status.set(SubscriptionStatus.PAST_DUE),
        Subscription.BillingPeriod.set(period.isoformat()),
        Subscription.RetryCount.set(failed_retries),
        *next_payment_on(sub.sub_id, retry_on),
        *next_reminder_on(sub.sub_id, next_reminder),
        *card,
    ]
    action = AuditAction.PAYMENT_ACTION_REQUIRED if awaiting_charge else AuditAction.PAYMENT_DECLINED
    kind = MerchantEventType.PAYMENT_ACTION_REQUIRED if awaiting_charge else MerchantEventType.PAYMENT_FAILED
    failed = payment_attempt_event(kind, sub, amount=amount, currency=sub.Currency, period_start=period,
                                   period_end=period_end, charge_id=awaiting_charge or charge_id,
                                   decline_code=decline_code, attempt=failed_retries, retry_on=retry_on)
    return transact_update(sub, actions, condition, check_version=False, items=audited_items(
        sub, actions, actor=actor, action=action, after_extra={"Amount": amount, "Product": sub.ProductName},
        note=awaiting_charge and f"{decline_code} {awaiting_charge}" or decline_code, also=[failed]))


def forget_awaiting_charge(sub: Subscription, charge_id: str) -> Subscription:
    """The charge the subscription waited on will not be confirmed (the bank refused the
    customer, or it was cancelled): the next retry charges anew. Only if it still names
    that charge (ConditionFailed otherwise: already paid, or replaced)."""
    return update_subscription(sub, [Subscription.PaymentDetails.AwaitingCharge.remove()],
                               Subscription.PaymentDetails.AwaitingCharge == charge_id, check_version=False)


def claim_reminder(sub: Subscription, *, day: date, next_reminder: date | None) -> Subscription:
    """Claim the reminder due on ``day`` before sending it: ``NextReminderDate`` moves on
    only if it still equals ``day``, so of two runs exactly one sends the e-mail. One
    UpdateItem."""
    actions = [Subscription.LastReminderDate.set(day.isoformat()), *next_reminder_on(sub.sub_id, next_reminder)]
    condition = (Subscription.NextReminderDate == day.isoformat()) & live()
    return update_subscription(sub, actions, condition, check_version=False)


def record_upcoming_invoice(sub: Subscription, payment: date, notice: MerchantEvent) -> bool:
    """The merchant's ``invoice.upcoming`` (``notice``) of the payment due on ``payment``,
    once: one TransactWriteItems of the event and ``UpcomingNoticeFor`` set to that day,
    only while the payment is still due then and not yet announced (the day, not the
    version: a reminder claimed meanwhile does not undo it). A re-run, or a second run at
    once, writes nothing: False."""
    due = payment.isoformat()
    condition = _still_due(payment) & (
        Subscription.UpcomingNoticeFor.does_not_exist() | (Subscription.UpcomingNoticeFor != due))
    try:
        transact_update(sub, [Subscription.UpcomingNoticeFor.set(due)], condition, check_version=False,
                        items=[notice])
    except ConditionFailed:
        return False
    return True
