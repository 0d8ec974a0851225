"""Subscriptions: create, read, and the portal's and staff's conditional updates (change
day, replace card, cancel, set schedule), the two batch-index Queries, and the snapshot
that audit events record.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from billing.gateway import CardToken
from billing.models import Account, PaymentDetails, Subscription, SubscriptionStatus
from billing.schedule import reminder_date, rescheduled_payment_date, start_dates

from ._common import (
    AlreadyExists,
    ConditionFailed,
    PaymentInProgress,
    absent_if_invalid,
    iso_now,
    live,
    new_id,
    refused_as,
)


def payment_details_from(card: CardToken, billing_address: str | None = None) -> PaymentDetails:
    return PaymentDetails(
        Token=card.token, Brand=card.brand, Last4=card.last4,
        ExpMonth=card.exp_month, ExpYear=card.exp_year, BillingAddress=billing_address,
    )


def create_subscription(
    account: Account,
    *,
    sku: str,
    payment_day: int,
    amount: int,
    currency: str,
    card: CardToken,
    today: date,
    reminder_days_before: int,
    product_name: str | None = None,
    billing_address: str | None = None,
) -> Subscription:
    """PutItem, only if absent. The new item carries all four GSI keys (the ``Last*``
    ones at the creation date), so it is found on its first reminder and payment date.
    """
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    first_payment, first_reminder = start_dates(payment_day, today, reminder_days_before)
    sub_id = new_id()
    sub = Subscription(
        account.PK,
        Subscription.sk(sub_id=sub_id, sku=sku),
        Email=account.Email,
        SKU=sku,
        ProductName=product_name,
        PaymentDay=payment_day,
        PaymentAmount=amount,
        Currency=currency.upper(),
        NextPaymentDate=first_payment.isoformat(),
        LastPaymentDate=today.isoformat(),
        NextReminderDate=first_reminder.isoformat(),
        LastReminderDate=today.isoformat(),
        PaymentDetails=payment_details_from(card, billing_address),
        CreatedDate=iso_now(),
        Status=SubscriptionStatus.ACTIVE,
    )
    with refused_as(AlreadyExists, sub.SK):
        sub.save(condition=Subscription.SK.does_not_exist())
    return sub


@absent_if_invalid()
def get_subscription(account_id: str, sub_id: str, sku: str | None = None) -> Subscription | None:
    """GetItem when the SKU is known; otherwise one Query on the ``SUB#<SubId>#`` prefix
    (the SKU is part of the sort key, and URLs carry only the subscription id).
    """
    pk = Subscription.pk(account_id=account_id)
    if sku is not None:
        try:
            return Subscription.get(pk, Subscription.sk(sub_id=sub_id, sku=sku), consistent_read=True)
        except DoesNotExist:
            return None
    prefix = Subscription.sk_template.format(sub_id=sub_id, sku="")
    for sub in Subscription.query(pk, Subscription.SK.startswith(prefix), consistent_read=True):
        return sub
    return None


@absent_if_invalid(list)
def get_subscriptions_by_account(account_id: str) -> list[Subscription]:
    """Query base table, ``begins_with(SK, "SUB#")``: never receipts or other accounts'."""
    return list(
        Subscription.query(
            Subscription.pk(account_id=account_id),
            Subscription.SK.startswith(Subscription.sk_template.prefix),
        )
    )


def update_subscription(
    sub: Subscription,
    actions: list,
    condition: Condition | None = None,
    *,
    check_version: bool = True,
) -> Subscription:
    """UpdateItem with a condition; raises ConditionFailed when it does not hold.

    ``check_version`` adds PynamoDB's optimistic-locking check on ``Version`` (the
    portal's read-modify-write); batches pass their own business condition instead.
    """
    with refused_as(ConditionFailed, sub.SK):
        sub.update(actions=actions, condition=condition, add_version_condition=check_version)
    return sub


def change_payment_day(sub: Subscription, new_day: int, *, today: date, reminder_days_before: int) -> Subscription:
    """Move the schedule to a new anchor day without charging any month twice.

    Refused (``PaymentInProgress``) while a payment is due today or overdue: the payment
    run may be charging it right now under the old date's idempotency key, and moving
    the date would let the new date charge the same period again. The condition makes
    that hold even against a run that starts between our read and our write.
    """
    if date.fromisoformat(sub.NextPaymentDate) <= today:
        raise PaymentInProgress(sub.SK)
    unpaid = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    next_payment = rescheduled_payment_date(new_day, unpaid, today)
    remind = reminder_date(next_payment, reminder_days_before, today)
    return update_subscription(
        sub,
        [
            Subscription.PaymentDay.set(new_day),
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.NextReminderDate.set(remind.isoformat()),
            # A changed day ends any retry sequence: the new date is a fresh attempt.
            Subscription.BillingPeriod.remove(),
            Subscription.RetryCount.set(0),
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
        ],
        live() & (Subscription.NextPaymentDate > today.isoformat()),
    )


def set_schedule(
    sub: Subscription,
    *,
    next_payment: date,
    last_payment: date,
    next_reminder: date,
    last_reminder: date,
) -> Subscription:
    """Overwrite all four schedule dates (demo seeding and staff repairs)."""
    return update_subscription(
        sub,
        [
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.LastPaymentDate.set(last_payment.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
            Subscription.LastReminderDate.set(last_reminder.isoformat()),
        ],
        live(),
    )


def replace_card(sub: Subscription, card: CardToken, billing_address: str | None = None) -> Subscription:
    return update_subscription(
        sub, [Subscription.PaymentDetails.set(payment_details_from(card, billing_address))], live()
    )


def cancel_subscription(sub: Subscription, *, reason: str = "customer", check_version: bool = True) -> Subscription:
    """No further charges: the ``Next*`` keys go, so the item leaves both indexes at once."""
    return update_subscription(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.CANCELLED),
            Subscription.CancelledDate.set(iso_now()),
            Subscription.CancelReason.set(reason),
            Subscription.NextPaymentDate.remove(),
            Subscription.NextReminderDate.remove(),
        ],
        live(),
        check_version=check_version,
    )


def get_due_reminders_by_date(day: date, *, page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-1, ``NextReminderDate = day``: every subscription to remind that day."""
    return Subscription.due_reminders.query(day.isoformat(), page_size=page_size)


def get_due_payments_by_date(day: date, *, page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-2, ``NextPaymentDate = day``: every subscription to charge that day."""
    return Subscription.due_payments.query(day.isoformat(), page_size=page_size)


def subscription_snapshot(sub: Subscription) -> dict:
    """The fields staff and customers care about, for audit before/after records."""
    return {
        "Status": sub.Status,
        "PaymentDay": sub.PaymentDay,
        "PaymentAmount": sub.PaymentAmount,
        "Currency": sub.Currency,
        "NextPaymentDate": sub.NextPaymentDate,
        "NextReminderDate": sub.NextReminderDate,
        "Card": f"{sub.PaymentDetails.Brand} ****{sub.PaymentDetails.Last4}" if sub.PaymentDetails else None,
    }
