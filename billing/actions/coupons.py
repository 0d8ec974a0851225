"""Coupons by staff: make, change the limit and dates of, and end a code (each with its
audit event, in ``ACC#COUPONS``); give one to a live subscription from its next payment
(its event in the account). Customers give one at subscribing (``subscriptions.subscribe``)."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.models import Coupon, Subscription


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
    the run) or ``ConditionFailed`` (changed meanwhile)."""
    return access.apply_coupon(sub, coupon, today=today, actor=actor)
