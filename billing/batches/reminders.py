"""One reminder: when it falls, which payment it announces, and the claim-then-send that
makes two runs send it once.
"""

from __future__ import annotations

import contextlib
from datetime import date, timedelta

from django.conf import settings

from billing import access
from billing.models import Subscription, SubscriptionStatus
from billing.schedule import next_payment_date

from .mail import _email, _sub_context
from .outcomes import ReminderOutcome


def _days_before() -> int:
    return settings.REMINDER_DAYS_BEFORE


def _reminder_before(payment: date, run_date: date) -> date:
    """The reminder for ``payment``: ``REMINDER_DAYS_BEFORE`` earlier, but after today
    (today's reminder run may be over) and never after the payment itself."""
    remind = payment - timedelta(days=_days_before())
    return max(remind, min(run_date + timedelta(days=1), payment))


def _reminded_payment_date(sub: Subscription, day: date) -> date:
    """The payment a reminder due on ``day`` announces. While past due,
    ``NextPaymentDate`` is a retry date, and the reminder is for the next anchor date,
    ``REMINDER_DAYS_BEFORE`` after ``day``."""
    if sub.Status == SubscriptionStatus.PAST_DUE or not sub.NextPaymentDate:
        return day + timedelta(days=_days_before())
    return date.fromisoformat(sub.NextPaymentDate)


def _following_reminder(sub: Subscription, payment: date) -> date:
    """The reminder of the payment after ``payment``, on the subscription's anchor day
    (GSI-1 projects ``PaymentDay`` for this: no GetItem per reminder)."""
    following = next_payment_date(sub.PaymentDay, payment)
    return following - timedelta(days=_days_before())


def send_reminder(sub: Subscription, *, day: date, dry_run: bool = False) -> ReminderOutcome:
    """Claim the reminder due on ``day`` (conditional update), then e-mail it."""
    out = ReminderOutcome("skipped", sub.sub_id, sub.account_id, day=day)
    if not sub.is_live or sub.NextReminderDate != day.isoformat():
        out.reason = "not live or not due"
        return out
    payment = out.payment_date = _reminded_payment_date(sub, day)
    if dry_run:
        out.status = "dry_run"
        return out
    try:
        access.claim_reminder(sub, day=day, next_reminder=max(_following_reminder(sub, payment), day + timedelta(days=1)))
    except access.ConditionFailed:
        out.reason = "claimed by another run"
        return out
    out.status = "sent"
    out.mail_error = _email("reminder", sub.Email, f"Upcoming payment: {sub.ProductName or sub.SKU} on {payment:%d %b %Y}", {
        **_sub_context(sub), "payment_date": payment,
    })
    return out


def _skip_stale_reminder(sub: Subscription, day: date, dry_run: bool) -> ReminderOutcome:
    out = ReminderOutcome("skipped", sub.sub_id, sub.account_id, day=day, reason="payment date already passed")
    if not dry_run:
        payment = _reminded_payment_date(sub, day)
        with contextlib.suppress(access.ConditionFailed):
            access.claim_reminder(sub, day=day, next_reminder=max(_following_reminder(sub, payment), day + timedelta(days=1)))
    return out
