"""Pure coupon rules: a code's shape, what a coupon takes off a period's amount, and how
many payments it lasts (docs/MONEY.md "Coupons").

A coupon takes a percentage off (rounded half up to the minor unit) or an amount off (in
the subscription's currency, never more than the period's amount), for the first payment
after it is applied (``once``), for N payments (``repeating``) or for every payment
(``forever``). Nothing here reads settings, the clock or the database.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

MAX_CODE_LENGTH = 32
CODE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
MAX_REPEATING_PAYMENTS = 120


class CouponDuration(StrEnum):
    ONCE = "once"
    REPEATING = "repeating"
    FOREVER = "forever"


def normalize_code(code: str) -> str | None:
    """The code as stored (upper case, no surrounding spaces), or None when it is not one:
    letters, digits and ``-``, at most 32 characters (nothing else ever reaches a key)."""
    code = (code or "").strip().upper()
    return code if 0 < len(code) <= MAX_CODE_LENGTH and set(code) <= CODE_CHARACTERS else None


def discount(amount: int, *, percent_off: int | None = None, amount_off: int | None = None) -> int:
    """What a coupon takes off ``amount`` (minor units): ``percent_off`` % of it rounded
    half up, or ``amount_off``, never more than ``amount`` and never below 0."""
    if amount <= 0:
        return 0
    if percent_off:
        return min(amount, (amount * int(percent_off) + 50) // 100)
    if amount_off:
        return min(amount, int(amount_off))
    return 0


def payments_left(duration: str, repeating_payments: int | None = None) -> int | None:
    """How many payments a newly applied coupon discounts: 1 for ``once``, N for
    ``repeating`` N, None (every one) for ``forever``."""
    if duration == CouponDuration.ONCE:
        return 1
    if duration == CouponDuration.REPEATING:
        if not repeating_payments or not 1 <= repeating_payments <= MAX_REPEATING_PAYMENTS:
            raise ValueError(f"a repeating coupon lasts 1-{MAX_REPEATING_PAYMENTS} payments")
        return int(repeating_payments)
    if duration == CouponDuration.FOREVER:
        return None
    raise ValueError(f"unknown coupon duration {duration!r}")


def after_payment(left: int | None) -> int | None:
    """Payments left after one discounted payment: None (forever) stays None; 0 means the
    coupon is used up and leaves the subscription."""
    return None if left is None else max(0, int(left) - 1)


class CouponRefusal(StrEnum):
    """Why a coupon cannot be applied now (each has its own message on the form)."""

    ENDED = "ended"
    NOT_YET = "not_yet"
    EXPIRED = "expired"
    USED_UP = "used_up"
    CURRENCY = "currency"
    # a coupon discounts the fixed fee: a subscription to usage alone has none (usage is
    # never discounted, docs/MONEY.md "Coupons")
    NO_FIXED_FEE = "no_fixed_fee"


def refusal(*, active: bool, valid_from: str | None, valid_until: str | None, uses: int, max_uses: int | None,
            amount_currency: str | None, currency: str, day: date) -> CouponRefusal | None:
    """Why a coupon as read cannot be applied on ``day`` to a price in ``currency``
    (dates are UTC days ``YYYY-MM-DD``, both included), or None when it can. The write's
    own condition checks the same things again (a coupon changed meanwhile)."""
    today = day.isoformat()
    if not active:
        return CouponRefusal.ENDED
    if valid_from and today < valid_from:
        return CouponRefusal.NOT_YET
    if valid_until and today > valid_until:
        return CouponRefusal.EXPIRED
    if max_uses is not None and uses >= max_uses:
        return CouponRefusal.USED_UP
    if amount_currency and amount_currency.upper() != currency.upper():
        return CouponRefusal.CURRENCY
    return None

