"""One payment: charge with an idempotency key, write the receipt only if absent, then
advance (or mark past due, or cancel) on condition the item is still due.
"""

from __future__ import annotations

import time
from datetime import date

from django.conf import settings

from billing import access
from billing.gateway import ChargeResult, GatewayError, PaymentGateway, get_gateway
from billing.mail import send_customer_email, subscription_context
from billing.models import Subscription
from billing.money import format_with_code
from billing.schedule import next_payment_date, next_retry_date, reminder_date

from .outcomes import PaymentOutcome, PaymentStatus

GATEWAY_ATTEMPTS = 3  # a GatewayError leaves the outcome unknown: the same key is safe to repeat


def charge_key(sub_id: str, period: date, attempt: int) -> str:
    """The gateway idempotency key of one attempt to pay one period."""
    key = f"{sub_id}:{period.isoformat()}"
    return key if attempt == 0 else f"{key}:retry{attempt}"


def _charge(gateway: PaymentGateway, sub: Subscription, key: str, period: date, attempt: int) -> ChargeResult:
    metadata = {"sub_id": sub.sub_id, "billing_date": period.isoformat(), "attempt": str(attempt)}
    for n in range(GATEWAY_ATTEMPTS):
        try:
            return gateway.charge(sub.PaymentDetails.Token, sub.PaymentAmount, sub.Currency, key, metadata)
        except GatewayError:
            if n + 1 == GATEWAY_ATTEMPTS:
                raise
            time.sleep(0.2 * 2**n)
    raise AssertionError("unreachable")


def _next_reminder(payment: date, run_date: date) -> date:
    return reminder_date(payment, settings.REMINDER_DAYS_BEFORE, run_date)


def take_payment(
    sub: Subscription, *, run_date: date, dry_run: bool = False, gateway: PaymentGateway | None = None
) -> PaymentOutcome:
    """Charge one subscription for the payment it is due (its ``NextPaymentDate``).

    ``sub`` is the item as read from GSI-2 or by GetItem. An active subscription is
    charged only when due on or before ``run_date``; a past-due one may be retried
    early (staff's "retry now"). Safe to call again after a crash at any point and to
    call from two processes at once: see the module docstring. DynamoDB and gateway
    failures raise (the caller counts them as errors); business outcomes are returned.
    """
    out = PaymentOutcome(PaymentStatus.SKIPPED, sub.sub_id, sub.account_id)
    if not sub.is_live or not sub.NextPaymentDate:
        out.reason = "not live"
        return out
    due = out.due = date.fromisoformat(sub.NextPaymentDate)
    retrying = bool(sub.BillingPeriod)
    period = out.period = date.fromisoformat(sub.BillingPeriod) if retrying else due
    out.attempt = (sub.RetryCount or 0) + 1 if retrying else 0
    if due > run_date and not retrying:
        out.reason = f"not due until {due}"
        return out
    if dry_run:
        out.status, out.reason = PaymentStatus.DRY_RUN, f"would charge {format_with_code(sub.PaymentAmount, sub.Currency)}"
        return out

    result = _charge(gateway or get_gateway(), sub, charge_key(sub.sub_id, period, out.attempt), period, out.attempt)
    out.charge_id = result.charge_id
    if result.succeeded:
        return _paid(sub, out, result, run_date)
    return _declined(sub, out, result, run_date)


def _paid(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date) -> PaymentOutcome:
    assert out.period and out.due
    # The receipt first: if we die after it, the re-run finds it and only advances.
    access.create_receipt(
        sub, billing_date=out.period, amount=result.amount, currency=result.currency,
        charge_id=result.charge_id, retention_days=settings.RECEIPT_RETENTION_DAYS,
    )
    next_payment = next_payment_date(sub.PaymentDay, out.period)
    try:
        access.advance_after_payment(
            sub, slot=out.due, paid_period=out.period, next_payment=next_payment,
            next_reminder=_next_reminder(next_payment, run_date),
        )
    except access.ConditionFailed:
        out.reason = "already advanced by another run"
        return out
    out.status, out.next_payment = PaymentStatus.PAID, next_payment
    out.mail_error = send_customer_email("receipt", sub.Email, f"Receipt: {sub.ProductName or sub.SKU}, {out.period:%d %b %Y}", {
        **subscription_context(sub), "amount": format_with_code(result.amount, result.currency),
        "billing_date": out.period, "charge_id": result.charge_id, "next_payment": next_payment,
    })
    return out


def _declined(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date) -> PaymentOutcome:
    assert out.period and out.due
    failed_retries = out.attempt  # the first attempt is not a retry
    retry_on = next_retry_date(out.period, settings.PAYMENT_RETRY_DAYS, failed_retries)
    reason = result.decline_code or "declined"
    context = {**subscription_context(sub), "billing_date": out.period, "decline_code": reason, "retry_on": retry_on}
    if retry_on is None:
        try:
            access.cancel_subscription(sub, reason="payment_failed", check_version=False)
        except access.ConditionFailed:
            out.reason = "already cancelled or changed by another run"
            return out
        out.status, out.reason = PaymentStatus.CANCELLED, f"{reason}; no retry left"
        out.mail_error = send_customer_email("subscription_cancelled", sub.Email, f"Subscription cancelled: {context['product']}", context)
        return out
    # The reminder for the next period: the retry does not move the anchor schedule.
    next_anchor = next_payment_date(sub.PaymentDay, out.period)
    try:
        access.mark_past_due(
            sub, slot=out.due, period=out.period, failed_retries=failed_retries, retry_on=retry_on,
            next_reminder=_next_reminder(next_anchor, run_date),
        )
    except access.ConditionFailed:
        out.reason = "already handled by another run"
        return out
    out.status, out.reason, out.next_payment = PaymentStatus.DECLINED, f"{reason}; retry on {retry_on}", retry_on
    out.mail_error = send_customer_email("payment_declined", sub.Email, f"Payment declined: {context['product']}", context)
    return out
