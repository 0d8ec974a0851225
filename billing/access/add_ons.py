"""A change of add-ons (billing/rules/add_ons.py): the subscription's list and the next
payment's fee, its audit event and the merchant's ``subscription.updated``, in one
TransactWriteItems, on condition that the subscription is still as it was read (its
version, as the switch to usage alone's: the list is rewritten whole, so a change made
meanwhile, even by a reminder, refuses this one and nothing is written)."""

from __future__ import annotations

from datetime import date
from typing import Any

from billing.access._common import utc_now
from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, subscription_event
from billing.access.paid_changes import commit_change, no_switch_pending, save_change
from billing.models import AuditAction, MerchantEventType, Subscription, SubscriptionStatus
from billing.rules.add_ons import AddOnsChange


def _as_read(sub: Subscription, change: AddOnsChange, today: date) -> Any:
    """Still active, neither paused, cancelling nor switching, no payment due, at the fee
    and the version read."""
    return ((Subscription.Status == SubscriptionStatus.ACTIVE)
            & (Subscription.NextPaymentDate > today.isoformat())
            & (Subscription.PaymentAmount == change.old_price)
            & Subscription.CancelMode.does_not_exist() & Subscription.PausedFrom.does_not_exist()
            & no_switch_pending(today) & (Subscription.Version == sub.Version))


def change_add_ons(sub: Subscription, change: AddOnsChange, *, today: date, actor: str) -> None:
    """Write ``change``: the add-ons after it and ``PaymentAmount`` = its ``new_price``.
    ``ConditionFailed`` when the subscription changed since it was read (nothing written)."""
    before = subscription_snapshot(sub)
    stored = change.stored()
    actions = [Subscription.AddOns.set(stored) if stored else Subscription.AddOns.remove(),
               Subscription.PaymentAmount.set(change.new_price)]
    action = AuditAction.ADD_ON_ADDED if change.added else AuditAction.ADD_ON_REMOVED
    event = new_event(sub.account_id, actor=actor, action=action, subject=sub.SK, before=before,
                      after={**before, "PaymentAmount": change.new_price, "AddOn": change.price_id,
                             "Effective": change.effective.isoformat()})
    merchant = subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, preview(sub, actions))

    def write(tx: Any, number: str | None = None) -> None:
        save_change(tx, sub, actions=actions, condition=_as_read(sub, change, today), event=event, receipt=None,
                    lookup=None, merchant_events=[merchant])

    commit_change(sub, write, charging=False, processed_at=utc_now())
    # What the update wrote, in memory as a fresh read would show it (the transaction
    # moved the version on itself).
    sub.AddOns, sub.PaymentAmount = (stored or None), change.new_price
