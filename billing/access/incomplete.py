"""Incomplete subscriptions (Stripe Billing's ``incomplete`` and ``incomplete_expired``): a
first payment the bank wants the customer to confirm (3-D Secure).

* ``mark_incomplete``: the subscription leaves both due indexes (no reminder, never
  charged by the run, in no total) and names the charge that waits; an
  ``IncompleteEntry`` lets the payment run find it to expire.
* ``expire_incomplete``: unconfirmed after ``INCOMPLETE_HOURS``, it never started.
* Confirmed: the first charge is recorded by the batch's path (``advance_after_payment``
  takes an incomplete subscription as due on its first day), which makes it active again.

The entry is put before the subscription changes, so no incomplete subscription is
without one; an entry whose subscription is no longer incomplete is deleted by the run
that finds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta

from pynamodb.exceptions import DeleteError, DoesNotExist

from billing.access._common import is_conditional_failure, iso_now, utc_now
from billing.access.due_dates import leave_due_indexes, wait_out_of_due_indexes
from billing.access.outbox import payment_attempt_event, transact_update
from billing.access.subscriptions import audited_items
from billing.models import (
    AuditAction,
    IncompleteEntry,
    MerchantEventType,
    Subscription,
    SubscriptionStatus,
    TrialUse,
)

# The cancel reason of an incomplete subscription whose bank refused the confirmation.
NOT_CONFIRMED = "first_payment_not_confirmed"
# How long an entry outlives its subscription's deadline should nobody delete it.
ENTRY_TTL_DAYS = 30


def mark_incomplete(sub: Subscription, *, charge_id: str, actor: str, amount: int | None = None) -> Subscription:
    """The first charge waits for the customer's bank: ``incomplete``, out of both due
    indexes (``NextPaymentDate`` stays the first day, so the confirmed charge's advance
    finds it due there), the charge kept on its card. Only if it is still active and has
    never been paid (ConditionFailed otherwise: another process did it, or it was paid).
    The update, its audit event and the merchant's ``payment.action_required`` are one
    transaction."""
    created = sub.CreatedDate or iso_now()
    IncompleteEntry(
        IncompleteEntry.pk(), IncompleteEntry.sk(created=created, sub_id=sub.sub_id),
        AccountId=sub.account_id, SubId=sub.sub_id, SKU=sub.key_sku, ChargeId=charge_id, CreatedDate=created,
        TTL=utc_now() + timedelta(days=ENTRY_TTL_DAYS),
    ).save()
    actions = [
        Subscription.Status.set(SubscriptionStatus.INCOMPLETE),
        *wait_out_of_due_indexes(),
        Subscription.PaymentDetails.AwaitingCharge.set(charge_id),
    ]
    first = date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate else None
    waiting = payment_attempt_event(MerchantEventType.PAYMENT_ACTION_REQUIRED, sub, amount=amount,
                                    currency=sub.Currency, period_start=first, charge_id=charge_id,
                                    decline_code="authentication_required")
    return transact_update(
        sub, actions,
        (Subscription.Status == SubscriptionStatus.ACTIVE) & (Subscription.LastPaymentDate == Subscription.NextPaymentDate),
        check_version=False,
        items=audited_items(sub, actions, actor=actor, action=AuditAction.SUBSCRIPTION_INCOMPLETE, note=charge_id,
                            also=[waiting]),
    )


def incomplete_entries(*, created_before: datetime | None = None) -> Iterator[IncompleteEntry]:
    """One Query: the entries of incomplete subscriptions, oldest first; only those made
    before ``created_before`` (a range condition on the sort key)."""
    pk = IncompleteEntry.pk()
    if created_before is None:
        return IncompleteEntry.query(pk)
    return IncompleteEntry.query(pk, IncompleteEntry.SK < created_before.isoformat(timespec="seconds"))  # noqa: SIM300


def expire_incomplete(sub: Subscription, *, actor: str, declined: bool = False,
                      amount: int | None = None) -> Subscription:
    """Unconfirmed in time: ``incomplete_expired``, out of both indexes for good; it never
    started (nothing was served or kept). ``declined``: the bank refused the confirmation,
    so it ends as a declined first payment does (cancelled, ``NOT_CONFIRMED``). ``amount``:
    what the charge asked for, for the customer's list of failed attempts.
    Only if still incomplete (ConditionFailed: it was confirmed, or ended by another
    process). One transaction with its audit event and the merchant's
    ``subscription.cancelled`` (its object says ``incomplete_expired`` when it expired),
    and ``payment.failed`` when the bank refused."""
    status = SubscriptionStatus.CANCELLED if declined else SubscriptionStatus.INCOMPLETE_EXPIRED
    reason = NOT_CONFIRMED if declined else status.value
    actions = [
        Subscription.Status.set(status),
        Subscription.CancelledDate.set(iso_now()),
        Subscription.CancelReason.set(reason),
        *leave_due_indexes(),
    ]
    failed = []
    if declined:
        first = date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate else None
        failed.append(payment_attempt_event(
            MerchantEventType.PAYMENT_FAILED, sub, amount=amount, currency=sub.Currency, period_start=first,
            charge_id=sub.PaymentDetails.AwaitingCharge if sub.PaymentDetails else None, decline_code=NOT_CONFIRMED))
    return transact_update(
        sub, actions, Subscription.Status == SubscriptionStatus.INCOMPLETE, check_version=False,
        items=audited_items(sub, actions, actor=actor,
                            action=AuditAction.SUBSCRIPTION_CANCELLED if declined else AuditAction.SUBSCRIPTION_EXPIRED,
                            after_extra={"Amount": amount}, note=reason,
                            event=MerchantEventType.SUBSCRIPTION_CANCELLED, also=failed),
    )


def release_trial(sub: Subscription) -> None:
    """Give back the free trial a subscription that never started took (its marker, only
    if it is this subscription's)."""
    if not sub.TrialEnd:
        return
    marker = TrialUse(TrialUse.pk(account_id=sub.account_id), TrialUse.sk(sku=sub.key_sku))
    try:
        marker.delete(condition=TrialUse.SubId == sub.sub_id)
    except (DeleteError, DoesNotExist) as error:
        if isinstance(error, DeleteError) and not is_conditional_failure(error):
            raise
