"""Staff "retry now" on a past-due subscription: the nightly run's own payment path, so
the same exactly-once guarantees hold (a distinct idempotency key per retry attempt, the
receipt only if absent, the advance only if the subscription is still due), and its
audit event either way."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing import access
from billing.models import AuditAction, Subscription
from billing.operations.payments import take_payment
from core.payments.errors import GatewayError


@dataclass(frozen=True)
class RetryOutcome:
    status: str  # the payment's outcome: paid, declined, cancelled or a reason nothing was charged
    reason: str | None
    subscription: Subscription  # as it is after the attempt


def retry_now(sub: Subscription, *, run_date: date, actor: str) -> RetryOutcome:
    """Charge the past-due period now. ``GatewayError`` (nothing changed) is audited and
    raised for the page to say so."""
    before = access.subscription_snapshot(sub)
    try:
        result = take_payment(sub, run_date=run_date, actor=actor)
    except GatewayError as error:
        access.record_event(sub.account_id, actor=actor, action=AuditAction.STAFF_RETRY_FAILED,
                            subject=sub.SK, before=before, after=before, note=str(error)[:500])
        raise
    after = access.get_subscription(sub.account_id, sub.sub_id, sku=sub.key_sku) or sub
    access.record_event(sub.account_id, actor=actor, action=AuditAction.STAFF_RETRY, subject=sub.SK,
                        before=before, after=access.subscription_snapshot(after),
                        note=f"{result.status}: {result.reason}"[:500] if result.reason else result.status)
    return RetryOutcome(status=result.status, reason=result.reason, subscription=after)
