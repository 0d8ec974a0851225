"""Discount codes: validity dates checked at checkout (and again in the order's
transaction), with time travel; the arithmetic's properties with hypothesis."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from hypothesis import given
from hypothesis import strategies as st

from shop import access, faults
from shop.checkout import checkout
from shop.errors import (
    Busy,
    DiscountCodeExpired,
    DiscountCodeNotValidYet,
    DiscountCodeUsedUp,
    InvalidInput,
    NotFound,
)
from shop.models import DiscountCode
from shop.plan import discount_amount, split_payment
from tests.shop.helpers import build_shop, request, stock


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    access.create_discount_code("APRIL", percent_off=20, valid_from=date(2026, 4, 1), valid_until=date(2026, 4, 30))
    return shop_table


def at(*when: int):
    return time_machine.travel(datetime(*when, tzinfo=UTC), tick=False)


def test_a_code_is_valid_from_its_first_day_to_the_end_of_its_last(shop) -> None:
    with at(2026, 3, 31, 23, 59, 59), pytest.raises(DiscountCodeNotValidYet) as early:
        checkout(request(("album", 1), discount_code="april"))
    assert str(early.value) == "This code is not valid until 2026-04-01: remove it to order without it."
    assert early.value.field == "discount code"
    for moment in ((2026, 4, 1, 0, 0, 0), (2026, 4, 30, 23, 59, 59)):
        with at(*moment):
            order = checkout(request(("album", 1), discount_code="april"))
        assert (order.Subtotal, order.Discount, order.DiscountCode) == (10000, 2000, "APRIL")
    with at(2026, 5, 1, 0, 0, 0), pytest.raises(DiscountCodeExpired) as late:
        checkout(request(("album", 1), discount_code="april"))
    assert str(late.value) == "This code expired on 2026-04-30: remove it to order without it."
    # refused codes reserved nothing
    assert stock("album") == {"near": (10, 2, 8)}
    assert access.get_discount_code("APRIL").Uses == 2


def test_the_transaction_checks_the_dates_again(shop, monkeypatch) -> None:
    """Staff end the code between the checkout's read and its transaction: the order
    is refused with the date, and nothing is reserved."""

    def end_it(step: str) -> None:
        if step == "planned":
            code = DiscountCode(**DiscountCode.keys(code="APRIL"))
            code.update(actions=[DiscountCode.ValidUntil.set("2026-04-09")])

    with at(2026, 4, 10, 12, 0, 0):
        monkeypatch.setattr(faults, "hook", end_it)
        with pytest.raises(DiscountCodeExpired, match="expired on 2026-04-09"):
            checkout(request(("album", 1), discount_code="APRIL"))
    assert stock("album") == {"near": (10, 0, 10)} and access.get_discount_code("APRIL").Uses == 0


def test_the_transaction_tells_a_used_up_code_from_a_withdrawn_one(shop, monkeypatch) -> None:
    access.create_discount_code("ONCE", amount_off=500, currency="SEK", max_uses=1)
    changes = iter([DiscountCode.Uses.set(1), DiscountCode.Active.set("no")])

    def race(step: str) -> None:
        if step == "planned":
            DiscountCode(**DiscountCode.keys(code="ONCE")).update(actions=[next(changes)])

    monkeypatch.setattr(faults, "hook", race)
    with pytest.raises(DiscountCodeUsedUp):
        checkout(request(("album", 1), discount_code="ONCE"))
    DiscountCode(**DiscountCode.keys(code="ONCE")).update(actions=[DiscountCode.Uses.set(0)])
    with pytest.raises(NotFound, match="no discount code ONCE"):
        checkout(request(("album", 1), discount_code="ONCE"))


def test_dates_in_the_wrong_order_are_refused(shop) -> None:
    with pytest.raises(InvalidInput, match="before the first"):
        access.create_discount_code("BACKWARDS", percent_off=5, valid_from=date(2026, 5, 2),
                                    valid_until=date(2026, 5, 1))
    assert access.get_discount_code("BACKWARDS") is None


# --- the arithmetic (pure) ---------------------------------------------------------------

amounts = st.integers(min_value=0, max_value=10**12)


@given(subtotal=amounts, percent=st.integers(min_value=1, max_value=100))
def test_a_percentage_is_the_nearest_minor_unit_and_never_more_than_the_invoice(subtotal, percent) -> None:
    off = discount_amount(subtotal, percent_off=percent, amount_off=None)
    assert isinstance(off, int) and 0 <= off <= subtotal
    assert abs(off * 100 - subtotal * percent) <= 50  # rounded to the nearest minor unit
    if percent == 100:
        assert off == subtotal


@given(subtotal=amounts, amount=st.integers(min_value=1, max_value=10**12))
def test_an_amount_off_is_capped_at_the_invoice(subtotal, amount) -> None:
    off = discount_amount(subtotal, percent_off=None, amount_off=amount)
    assert isinstance(off, int) and off == min(subtotal, amount)


@given(subtotal=amounts, percent=st.one_of(st.none(), st.integers(min_value=1, max_value=100)),
       amount=st.integers(min_value=1, max_value=10**12), balance=st.one_of(st.none(), amounts))
def test_the_split_never_goes_below_zero_and_adds_up(subtotal, percent, amount, balance) -> None:
    off = discount_amount(subtotal, percent_off=percent, amount_off=None if percent else amount)
    split = split_payment(subtotal, off, balance)
    parts = (split.subtotal, split.discount, split.gift_card, split.card, split.total)
    assert all(isinstance(p, int) and p >= 0 for p in parts)
    assert split.total == subtotal - off and split.gift_card + split.card == split.total
    assert split.gift_card <= (balance or 0) and split.total <= subtotal


def test_a_limit_given_to_an_unlimited_code_during_a_checkout_holds(shop, monkeypatch) -> None:
    """Staff give an unlimited code a limit between the checkout's read and its
    transaction: the limit the checkout read (none) is in its condition, so the order is
    refused (try again) rather than passing a limit already reached."""
    access.create_discount_code("OPEN", percent_off=5)
    limits = iter([1, 2])

    def limit_it(step: str) -> None:
        if step == "planned":
            DiscountCode(**DiscountCode.keys(code="OPEN")).update(actions=[DiscountCode.Uses.set(1)])
            access.update_discount_code("OPEN", max_uses=next(limits), valid_from=None, valid_until=None)

    monkeypatch.setattr(faults, "hook", limit_it)
    with pytest.raises(DiscountCodeUsedUp):  # a limit of 1, used once: used up
        checkout(request(("album", 1), discount_code="OPEN"))
    DiscountCode(**DiscountCode.keys(code="OPEN")).update(actions=[DiscountCode.MaxUses.remove()])
    with pytest.raises(Busy, match="changed just now"):  # a limit of 2, used once: not used up, retry
        checkout(request(("album", 1), discount_code="OPEN"))
    assert access.get_discount_code("OPEN").Uses == 1 and stock("album") == {"near": (10, 0, 10)}


def test_staff_changes_to_a_code_are_conditional(shop) -> None:
    access.create_discount_code("TWICE", amount_off=500, currency="SEK", max_uses=2)
    DiscountCode(**DiscountCode.keys(code="TWICE")).update(actions=[DiscountCode.Uses.set(2)])
    with pytest.raises(InvalidInput, match="used 2 times: the limit cannot be lower"):
        access.update_discount_code("TWICE", max_uses=1, valid_from=None, valid_until=None)
    with pytest.raises(NotFound):
        access.update_discount_code("NOSUCH", max_uses=None, valid_from=None, valid_until=None)
    with pytest.raises(NotFound):
        access.end_discount_code("NOSUCH")
    assert access.get_discount_code("NOSUCH") is None  # no item made by a refused update
    ended = access.end_discount_code("twice")
    assert ended.Active == "no" and ended.Uses == 2 and ended.AmountOff == 500
