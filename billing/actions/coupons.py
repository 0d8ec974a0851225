"""Coupons by staff: make, change the limit and dates of, and end a code (each with its
audit event, in ``ACC#COUPONS``); give one to a live subscription from its next payment
(its event in the account). Customers give one at subscribing (``subscriptions.subscribe``)."""

from __future__ import annotations

from datetime import date, timedelta

from billing import access
from billing.models import Coupon, Subscription
from billing.rules.coupons import CouponRefusal
from billing.rules.switch import usage_only


def add_coupon(code: str, *, percent_off: int | None, amount_off: int | None, currency: str | None, duration: str,
               duration_payments: int | None, max_uses: int | None, valid_from: date | None,
               valid_until: date | None, actor: str) -> Coupon:
    """A new coupon; ``AlreadyExists`` when the code is taken (nothing written)."""
    return access.create_coupon(code, percent_off=percent_off, amount_off=amount_off, currency=currency,
                                duration=duration, duration_payments=duration_payments, max_uses=max_uses,
                                valid_from=valid_from, valid_until=valid_until, actor=actor)


def edit_coupon(coupon: Coupon, *, max_uses: int | None, valid_from: date | None, valid_until: date | None,
                actor: str) -> Coupon:
    """A new limit and dates (``ConditionFailed``: changed meanwhile, or a limit below its uses)."""
    return access.update_coupon(coupon, max_uses=max_uses, valid_from=valid_from, valid_until=valid_until,
                                actor=actor)


def end_coupon(coupon: Coupon, *, actor: str) -> Coupon:
    """No new uses; the subscriptions that have it keep it."""
    return access.end_coupon(coupon, actor=actor)


def give_coupon(sub: Subscription, coupon: Coupon, *, today: date, actor: str) -> Subscription:
    """Staff give ``coupon`` to a live subscription, from its next payment (replacing any
    coupon it had). ``CouponRefused``, ``PaymentInProgress`` (a payment is due: try after
    the run) or ``ConditionFailed`` (changed meanwhile). A subscription to usage alone has
    no fixed fee to discount: ``CouponRefused`` (``no_fixed_fee``), nothing written."""
    if usage_only(sub):
        raise access.CouponRefused(coupon.Code, CouponRefusal.NO_FIXED_FEE)
    return access.apply_coupon(sub, coupon, today=today, actor=actor)


def give_back_unused(sub: Subscription, *, today: date) -> bool:
    """A subscription with a coupon, ended in its free trial before any payment: the coupon
    discounted nothing, so its use goes back (as a first payment that failed gives it
    back), and a limited coupon can be used by someone else. Called once the cancel is
    written (a cancel refused changes nothing, a repeat is refused: one give-back). Only a
    cancel that ends it now: one at the end of the free days may still be kept, with the
    coupon. Returns whether a use was given back."""
    if not sub.CouponCode or not sub.TrialEnd or today > date.fromisoformat(sub.TrialEnd):
        return False
    made = date.fromisoformat(sub.CreatedDate[:10]) - timedelta(days=1)  # its UTC day, a billing day either side
    if any(r.sub_id == sub.sub_id for r in access.get_receipts_by_account(sub.account_id, made, today)):
        return False  # something was recorded (a coupon that took a payment whole included)
    access.release_coupon_use(sub.CouponCode)
    return True
