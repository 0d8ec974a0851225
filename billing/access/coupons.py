"""Coupons (docs/MONEY.md "Coupons"): staff's codes in one partition (``COUPONS``,
listed with one Query), each change a transaction with its audit event; and a coupon's
use, counted by a conditional update that joins the transaction writing it onto a
subscription, so a coupon is never used more than its limit, nor counted for a write that
did not happen.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.expressions.condition import Condition

from billing.access._common import (
    absent_if_invalid,
    is_conditional_failure,
    iso_now,
    live,
    refused_as,
    transact_with_retries,
    update_if,
)
from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, save_item, subscription_event
from billing.exceptions import AlreadyExists, ConditionFailed, CouponRefused, PaymentInProgress
from billing.models import (
    COUPON_EVENTS_ACCOUNT,
    AuditAction,
    Coupon,
    CouponStatus,
    MerchantEventType,
    Subscription,
)
from billing.rules.coupons import CouponDuration, normalize_code, payments_left, refusal
from core.dynamo import engine


def coupon_snapshot(coupon: Coupon) -> dict[str, Any]:
    """What an audit event records of a coupon."""
    return {"Code": coupon.Code, "PercentOff": coupon.PercentOff, "AmountOff": coupon.AmountOff,
            "Currency": coupon.Currency, "Duration": coupon.Duration, "DurationPayments": coupon.DurationPayments,
            "MaxUses": coupon.MaxUses, "Uses": coupon.Uses, "ValidFrom": coupon.ValidFrom,
            "ValidUntil": coupon.ValidUntil, "Status": coupon.Status}


def list_coupons() -> list[Coupon]:
    """Every coupon, by code: one Query of the ``COUPONS`` partition."""
    return list(Coupon.query(Coupon.pk()))


@absent_if_invalid()
def get_coupon(code: str) -> Coupon | None:
    """GetItem ``CODE#<CODE>`` (codes are case-insensitive); None for a code that cannot be one."""
    normalized = normalize_code(code)
    if normalized is None:
        return None
    try:
        return Coupon.get(Coupon.pk(), Coupon.sk(code=normalized), consistent_read=True)
    except DoesNotExist:
        return None


def _event(action: AuditAction, code: str, actor: str, before: dict | None, after: dict | None) -> Any:
    return new_event(COUPON_EVENTS_ACCOUNT, actor=actor, action=action, subject=Coupon.sk(code=code),
                     before=before, after=after)


def create_coupon(code: str, *, percent_off: int | None = None, amount_off: int | None = None,
                  currency: str | None = None, duration: str = CouponDuration.ONCE,
                  duration_payments: int | None = None, max_uses: int | None = None,
                  valid_from: date | None = None, valid_until: date | None = None, actor: str) -> Coupon:
    """A new coupon, only if its code is free (``AlreadyExists``), and its audit event: one
    TransactWriteItems."""
    normalized = normalize_code(code)
    if normalized is None:
        raise ValueError(f"not a coupon code: {code!r}")
    if (percent_off is None) == (amount_off is None):
        raise ValueError("a coupon takes either a percentage or an amount off")
    if percent_off is not None and not 1 <= percent_off <= 100:
        raise ValueError("the percentage must be 1-100")
    if amount_off is not None and (amount_off <= 0 or not currency):
        raise ValueError("an amount off must be positive and have a currency")
    payments_left(duration, duration_payments)  # ValueError for a duration that is not one
    if max_uses is not None and max_uses < 1:
        raise ValueError("a limit on uses must be at least 1")
    if valid_from and valid_until and valid_until < valid_from:
        raise ValueError("the last valid day is before the first")
    coupon = Coupon(
        Coupon.pk(), Coupon.sk(code=normalized), Code=normalized, PercentOff=percent_off, AmountOff=amount_off,
        Currency=currency.upper() if amount_off is not None and currency else None, Duration=str(duration),
        DurationPayments=duration_payments if duration == CouponDuration.REPEATING else None,
        MaxUses=max_uses, Uses=0, ValidFrom=valid_from.isoformat() if valid_from else None,
        ValidUntil=valid_until.isoformat() if valid_until else None, Status=CouponStatus.ACTIVE,
        CreatedDate=iso_now(),
    )
    with refused_as(AlreadyExists, normalized), engine.transact_write() as tx:
        tx.save(coupon, condition=Coupon.SK.does_not_exist())
        tx.save(_event(AuditAction.COUPON_CREATED, normalized, actor, None, coupon_snapshot(coupon)))
    return coupon


def update_coupon(coupon: Coupon, *, max_uses: int | None, valid_from: date | None, valid_until: date | None,
                  actor: str) -> Coupon:
    """New limit and dates for a coupon (its kind and size stay: a code given out keeps
    meaning what it meant), with its audit event. Refused (``ConditionFailed``) when the
    coupon changed since it was read (its ``Uses`` included: a limit never goes below the
    uses made)."""
    if max_uses is not None and max_uses < 1:
        raise ValueError("a limit on uses must be at least 1")
    if max_uses is not None and max_uses < coupon.Uses:
        raise ConditionFailed(coupon.Code)
    before = coupon_snapshot(coupon)
    actions = [
        Coupon.MaxUses.set(max_uses) if max_uses is not None else Coupon.MaxUses.remove(),
        Coupon.ValidFrom.set(valid_from.isoformat()) if valid_from else Coupon.ValidFrom.remove(),
        Coupon.ValidUntil.set(valid_until.isoformat()) if valid_until else Coupon.ValidUntil.remove(),
        Coupon.UpdatedDate.set(iso_now()),
    ]
    condition = Coupon.SK.exists() & (Coupon.Uses == coupon.Uses)
    if max_uses is not None:
        condition &= Coupon.Uses <= max_uses
    coupon.MaxUses, coupon.ValidFrom = max_uses, valid_from.isoformat() if valid_from else None
    coupon.ValidUntil = valid_until.isoformat() if valid_until else None
    with refused_as(ConditionFailed, coupon.Code), engine.transact_write() as tx:
        tx.update(Coupon(coupon.PK, coupon.SK), actions=actions, condition=condition)
        tx.save(_event(AuditAction.COUPON_UPDATED, coupon.Code, actor, before, coupon_snapshot(coupon)))
    return coupon


def end_coupon(coupon: Coupon, *, actor: str) -> Coupon:
    """No new uses from now on (the subscriptions that have it keep it), with its event."""
    before = coupon_snapshot(coupon)
    coupon.Status, coupon.UpdatedDate = CouponStatus.ENDED, iso_now()
    with refused_as(ConditionFailed, coupon.Code), engine.transact_write() as tx:
        tx.update(Coupon(coupon.PK, coupon.SK),
                  actions=[Coupon.Status.set(CouponStatus.ENDED), Coupon.UpdatedDate.set(coupon.UpdatedDate)],
                  condition=Coupon.SK.exists() & (Coupon.Status == CouponStatus.ACTIVE))
        tx.save(_event(AuditAction.COUPON_ENDED, coupon.Code, actor, before, coupon_snapshot(coupon)))
    return coupon


# --- a coupon's use ---------------------------------------------------------------------


def check_coupon(coupon: Coupon | None, code: str, *, currency: str, day: date) -> Coupon:
    """The coupon as read, if it can be given now to a price in ``currency``; else
    ``CouponRefused`` with the reason (None: no such code)."""
    if coupon is None:
        raise CouponRefused(normalize_code(code) or code, None)
    why = refusal(active=coupon.Status == CouponStatus.ACTIVE, valid_from=coupon.ValidFrom,
                  valid_until=coupon.ValidUntil, uses=int(coupon.Uses or 0), max_uses=coupon.MaxUses,
                  amount_currency=coupon.Currency, currency=currency, day=day)
    if why is not None:
        raise CouponRefused(coupon.Code, why)
    return coupon


def coupon_use_condition(coupon: Coupon, day: date) -> Condition:
    """The condition of one more use: active, valid on ``day`` (UTC days, both included),
    and under the limit read (which must still be the limit: staff may change it)."""
    today = day.isoformat()
    condition = ((Coupon.Status == CouponStatus.ACTIVE)
                 & (Coupon.ValidFrom.does_not_exist() | (Coupon.ValidFrom <= today))
                 & (Coupon.ValidUntil.does_not_exist() | (Coupon.ValidUntil >= today)))
    if coupon.MaxUses is not None:
        return condition & (Coupon.MaxUses == coupon.MaxUses) & (Coupon.Uses < coupon.MaxUses)
    return condition & Coupon.MaxUses.does_not_exist()


def add_coupon_use(tx: Any, coupon: Coupon, day: date) -> None:
    """Count one use of ``coupon`` in the transaction ``tx`` (on its condition)."""
    tx.update(Coupon(coupon.PK, coupon.SK), actions=[Coupon.Uses.add(1)], condition=coupon_use_condition(coupon, day))


def coupon_attributes(coupon: Coupon) -> dict[str, Any]:
    """A subscription's copy of the coupon's discount (the attributes the batches read)."""
    return {"CouponCode": coupon.Code, "CouponPercentOff": coupon.PercentOff, "CouponAmountOff": coupon.AmountOff,
            "CouponPaymentsLeft": payments_left(coupon.Duration, coupon.DurationPayments)}


def coupon_refused(error: TransactWriteError, coupon: Coupon, *, currency: str, day: date) -> None:
    """After a transaction with a coupon's use was refused by a condition: ``CouponRefused``
    with the reason, from the coupon as it is now (one GetItem), when it cannot be used;
    else nothing (another item's condition refused it). Told from the coupon read again,
    not from the cancellation reasons' order (moto's differs from DynamoDB's)."""
    now = get_coupon(coupon.Code)
    check_coupon(now, coupon.Code, currency=currency, day=day)
    if now is not None and (now.MaxUses != coupon.MaxUses or now.Status != coupon.Status):
        raise CouponRefused(coupon.Code, "changed") from error


def release_coupon_use(code: str) -> None:
    """Give back one use (a subscription that never started: its first payment failed).
    An UpdateItem after the cancel, not in its transaction: a crash between the two
    leaves the use counted."""
    update_if(Coupon(Coupon.pk(), Coupon.sk(code=code)), [Coupon.Uses.add(-1)], Coupon.SK.exists() & (Coupon.Uses > 0))


def apply_coupon(sub: Subscription, coupon: Coupon, *, today: date, actor: str) -> Subscription:
    """Give ``coupon`` to a live subscription from its next payment on (replacing any
    coupon it had): the subscription's update (Version-checked, live, and no payment due:
    ``NextPaymentDate`` > ``today``, so the payment run never charges across the change),
    the coupon's use and the event, in one TransactWriteItems. ``CouponRefused`` when the
    coupon cannot be used on ``day`` (UTC); ``PaymentInProgress`` while a payment is due;
    ``ConditionFailed`` when the subscription changed meanwhile."""
    check_coupon(coupon, coupon.Code, currency=sub.Currency, day=today)
    before = subscription_snapshot(sub)
    fields = coupon_attributes(coupon)
    actions = [getattr(Subscription, name).set(value) if value is not None else getattr(Subscription, name).remove()
               for name, value in fields.items()]
    # PynamoDB's version check and increment (the staff page's read-modify-write).
    condition = live() & (Subscription.NextPaymentDate > today.isoformat())
    after = {**before, **{"Coupon": coupon.Code, "CouponPaymentsLeft": fields["CouponPaymentsLeft"]}}
    event = new_event(sub.account_id, actor=actor, action=AuditAction.COUPON_APPLIED, subject=sub.SK,
                      before=before, after=after, note=coupon.Code)
    updated = subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, preview(sub, actions))

    def write(tx: Any) -> None:
        tx.update(sub, actions=actions, condition=condition)
        add_coupon_use(tx, coupon, today)
        tx.save(event)
        save_item(tx, updated)

    try:
        transact_with_retries(write)
    except TransactWriteError as error:
        if not is_conditional_failure(error):
            raise
        coupon_refused(error, coupon, currency=sub.Currency, day=today)
        if sub.NextPaymentDate and sub.NextPaymentDate <= today.isoformat():
            raise PaymentInProgress(sub.SK) from error
        raise ConditionFailed(sub.SK) from error
    for name, value in fields.items():
        setattr(sub, name, value)
    return sub
