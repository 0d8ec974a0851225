"""Ending and pausing a subscription: cancel (at period end or now), keep, pause, resume.

Each is one TransactWriteItems: the conditional update, its audit event and its merchant
event (``_audited_update``'s habit: the caller cannot forget them, and none is written
without the change). The date rules are ``billing.rules.lifecycle``'s; the
due-index keys are written through ``due_dates`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from billing.access._common import iso_now, live
from billing.access.due_dates import leave_due_indexes, next_payment_on, next_reminder_on
from billing.access.outbox import transact_update
from billing.access.subscriptions import audited_items
from billing.access.usage_billing import usage_end_entry
from billing.models import AuditAction, MerchantEventType, Subscription, SubscriptionStatus
from billing.rules.lifecycle import (
    CancelMode,
    check_pausable,
    kept_next_payment,
    pause_start,
    resume_on,
    resumed_cadence,
)
from billing.rules.schedule import cadence_of, renewal_reminder

COMMENT_MAX_LENGTH = 1000


def _audited(sub: Subscription, actions: list, condition: Condition, *, actor: str, action: AuditAction | str,
             event: MerchantEventType, note: str | None = None, also: Sequence[Model] = ()) -> Subscription:
    return transact_update(sub, actions, condition, items=[
        *audited_items(sub, actions, actor=actor, action=action, note=note, event=event), *also])


def end_subscription(sub: Subscription, *, mode: CancelMode, today: date, actor: str, reason: str,
                     comment: str = "", action: AuditAction = AuditAction.SUBSCRIPTION_CANCELLED) -> Subscription:
    """Cancel: the item leaves both indexes at once (no further charge or reminder).

    ``PERIOD_END``: served to ``PaidThroughDate``, and ``keep_subscription`` may undo it
    until then. ``NOW``: served through today only (``PaidThroughDate`` becomes today
    if it was later; the caller refunds the days after it). A cancel at period end may
    still be turned into a cancel now, and so may staff's cancel (no mode) while its paid
    days run (an account's close ends both). The reason code and the comment are stored
    on the item and in the event's note."""
    comment = comment.strip()[:COMMENT_MAX_LENGTH]
    actions = [
        Subscription.Status.set(SubscriptionStatus.CANCELLED),
        Subscription.CancelledDate.set(iso_now()),
        Subscription.CancelReason.set(reason),
        Subscription.CancelMode.set(mode),
        Subscription.CancelComment.set(comment) if comment else Subscription.CancelComment.remove(),
        Subscription.PausedFrom.remove(),
        Subscription.PausedUntil.remove(),
        *leave_due_indexes(),
    ]
    if mode == CancelMode.NOW and sub.PaidThroughDate and date.fromisoformat(sub.PaidThroughDate) > today:
        actions.append(Subscription.PaidThroughDate.set(today.isoformat()))
    condition = live()
    if mode == CancelMode.NOW:
        cancelled = Subscription.Status == SubscriptionStatus.CANCELLED
        still_served_by_staff = Subscription.CancelMode.does_not_exist() \
            & (Subscription.PaidThroughDate > today.isoformat())
        condition = condition | (cancelled & ((Subscription.CancelMode == CancelMode.PERIOD_END)
                                              | still_served_by_staff))
    note = f"{mode}: {reason}" + (f": {comment}" if comment else "")
    event = MerchantEventType.SUBSCRIPTION_CANCEL_SCHEDULED if mode == CancelMode.PERIOD_END \
        else MerchantEventType.SUBSCRIPTION_CANCELLED
    # Its last period's usage: no payment is left to carry it. Billed the day after it by
    # the payment run; a cancel now bills it at once, the run only should that fail
    # (billing/operations/final_usage.py).
    last_day = today if mode == CancelMode.NOW else \
        date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    ending = [usage_end_entry(sub, last_day, mode)] if sub.MeteredPriceId and last_day else []
    return _audited(sub, actions, condition, actor=actor, action=action, note=note[:500], event=event, also=ending)


def keep_subscription(sub: Subscription, *, today: date, reminder_days_before: int, actor: str) -> Subscription:
    """Undo a cancel at period end: active again, due the day after ``PaidThroughDate``
    (reminded by ``schedule.reminder_date``). Only while that day is still ahead or
    today, and only for a cancel at period end (ConditionFailed otherwise)."""
    next_payment = kept_next_payment(sub)
    return _audited(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
            *next_payment_on(sub.sub_id, next_payment),
            *next_reminder_on(sub.sub_id, renewal_reminder(cadence_of(sub), next_payment, reminder_days_before, today)),
            Subscription.CancelledDate.remove(),
            Subscription.CancelReason.remove(),
            Subscription.CancelMode.remove(),
            Subscription.CancelComment.remove(),
        ],
        (Subscription.Status == SubscriptionStatus.CANCELLED)
        & (Subscription.CancelMode == CancelMode.PERIOD_END)
        & (Subscription.PaidThroughDate >= today.isoformat()),
        actor=actor, action=AuditAction.SUBSCRIPTION_KEPT, event=MerchantEventType.SUBSCRIPTION_UPDATED,
    )


def pause_subscription(sub: Subscription, *, resume: date | None, today: date, reminder_days_before: int,
                       actor: str, action: AuditAction = AuditAction.SUBSCRIPTION_PAUSED) -> Subscription:
    """Pause collection from the first unpaid day until ``resume`` (the first payment
    after the pause, from ``lifecycle.pause_end``), or until "Resume" when None.

    Condition: still active and due on the date read, which is after today (a payment
    being taken cannot be moved: ``PaymentInProgress``'s rule)."""
    next_payment = check_pausable(sub, today)
    actions = [Subscription.PausedFrom.set(pause_start(sub).isoformat())]
    if resume is None:
        actions += [*leave_due_indexes(), Subscription.PausedUntil.remove()]
    else:
        actions += [
            *next_payment_on(sub.sub_id, resume),
            *next_reminder_on(sub.sub_id, renewal_reminder(cadence_of(sub), resume, reminder_days_before, today)),
            Subscription.PausedUntil.set(resume.isoformat()),
        ]
    condition = ((Subscription.Status == SubscriptionStatus.ACTIVE)
                 & (Subscription.NextPaymentDate == next_payment.isoformat())
                 & (Subscription.NextPaymentDate > today.isoformat()))
    return _audited(sub, actions, condition, actor=actor, action=action,
                    note=f"until {resume}" if resume else "until resumed", event=MerchantEventType.SUBSCRIPTION_PAUSED)


def resume_subscription(sub: Subscription, *, today: date, reminder_days_before: int, actor: str,
                        action: AuditAction = AuditAction.SUBSCRIPTION_RESUMED) -> Subscription:
    """End a pause: due again on ``lifecycle.resume_on`` (the paid-through date is
    untouched: nothing is charged for the paused days). The pause's fields go, always: a
    resumed subscription is active, whatever day its next payment falls on (kept, once the
    paid days were over, ``PausedUntil`` named that payment's day, and every page read it
    as "paused until" that day; the audit event keeps the pause's history)."""
    resume = resume_on(sub, today)
    anew = resumed_cadence(sub, today)
    actions = [
        *next_payment_on(sub.sub_id, resume),
        *next_reminder_on(sub.sub_id, renewal_reminder(anew or cadence_of(sub), resume, reminder_days_before, today)),
        Subscription.PausedFrom.remove(), Subscription.PausedUntil.remove(),
        # after a long unpaid wait (a yearly's next anniversary): anchored on the resume
        *([Subscription.PaymentDay.set(anew.payment_day), Subscription.IntervalAnchor.set(anew.anchor.isoformat())]
          if anew and anew.anchor else []),
    ]
    condition = (Subscription.Status == SubscriptionStatus.ACTIVE) & Subscription.PausedFrom.exists()
    if sub.NextPaymentDate:  # a dated pause: still due on the date read, which is ahead
        condition = condition & (Subscription.NextPaymentDate == sub.NextPaymentDate) \
            & (Subscription.NextPaymentDate > today.isoformat())
    else:
        condition = condition & Subscription.NextPaymentDate.does_not_exist()
    note = f"due again on {resume}" + (f", anchored anew on {resume}" if anew else "")
    return _audited(sub, actions, condition, actor=actor, action=action, note=note,
                    event=MerchantEventType.SUBSCRIPTION_RESUMED)
