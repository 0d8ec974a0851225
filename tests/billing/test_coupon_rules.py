"""The coupon rules (billing/rules/coupons.py): a code's shape, the discount to the minor
unit, how many payments a coupon lasts, why one is refused."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules.coupons import (
    CouponDuration,
    CouponRefusal,
    after_payment,
    discount,
    normalize_code,
    payments_left,
    refusal,
)

amounts = st.integers(min_value=0, max_value=10**9)


@given(amounts, st.integers(min_value=1, max_value=100))
def test_a_percentage_is_rounded_half_up_to_the_minor_unit(amount: int, percent: int) -> None:
    exact = Decimal(amount) * percent / 100
    assert discount(amount, percent_off=percent) == int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    assert 0 <= discount(amount, percent_off=percent) <= amount


@given(amounts, st.integers(min_value=1, max_value=10**10))
def test_an_amount_off_is_at_most_the_amount(amount: int, off: int) -> None:
    assert discount(amount, amount_off=off) == min(amount, off)


@given(amounts)
def test_a_hundred_percent_takes_everything_and_no_coupon_nothing(amount: int) -> None:
    assert discount(amount, percent_off=100) == amount
    assert discount(amount) == 0


def test_known_values() -> None:
    assert discount(999, percent_off=15) == 150  # 149.85
    assert discount(999, percent_off=25) == 250  # 249.75
    assert discount(10, percent_off=25) == 3  # 2.5 rounds up
    assert discount(10, percent_off=24) == 2  # 2.4
    assert discount(500, amount_off=700) == 500


def test_codes_are_upper_cased_and_checked() -> None:
    assert normalize_code(" welcome-20 ") == "WELCOME-20"
    assert normalize_code("A" * 32) == "A" * 32
    for bad in ("", "A" * 33, "TEN OFF", "TEN#OFF", "ÉTÉ", "a_b"):
        assert normalize_code(bad) is None


@given(st.text(max_size=40))
def test_a_normalized_code_is_only_letters_digits_and_dashes(text: str) -> None:
    code = normalize_code(text)
    assert code is None or (0 < len(code) <= 32 and all(c.isascii() and (c.isalnum() or c == "-") for c in code)
                            and code == code.upper())


def test_durations() -> None:
    assert payments_left(CouponDuration.ONCE) == 1
    assert payments_left(CouponDuration.REPEATING, 3) == 3
    assert payments_left(CouponDuration.FOREVER) is None
    with pytest.raises(ValueError):
        payments_left(CouponDuration.REPEATING, 0)
    with pytest.raises(ValueError):
        payments_left("sometimes")
    assert after_payment(None) is None
    assert after_payment(3) == 2 and after_payment(1) == 0


def test_refusals() -> None:
    ok = {"active": True, "valid_from": "2027-01-01", "valid_until": "2027-01-31", "uses": 2, "max_uses": 3,
          "amount_currency": None, "currency": "USD", "day": date(2027, 1, 31)}
    assert refusal(**ok) is None
    assert refusal(**{**ok, "day": date(2027, 1, 1)}) is None
    assert refusal(**{**ok, "active": False}) == CouponRefusal.ENDED
    assert refusal(**{**ok, "day": date(2026, 12, 31)}) == CouponRefusal.NOT_YET
    assert refusal(**{**ok, "day": date(2027, 2, 1)}) == CouponRefusal.EXPIRED
    assert refusal(**{**ok, "uses": 3}) == CouponRefusal.USED_UP
    assert refusal(**{**ok, "max_uses": None, "uses": 10**6}) is None
    assert refusal(**{**ok, "amount_currency": "eur"}) == CouponRefusal.CURRENCY
    assert refusal(**{**ok, "amount_currency": "usd"}) is None
