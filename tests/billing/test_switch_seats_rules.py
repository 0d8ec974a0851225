"""Switching a subscription of several seats (docs/MONEY.md "Switching price or cadence",
several seats): the seats are kept, the new price a period is the target's for them, and
the charge and the credit follow the one-seat rules. Pure rules: no table."""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.models import Receipt, Subscription, SubscriptionStatus
from billing.rules.schedule import first_period, period_amount
from billing.rules.switch import SwitchRefused, SwitchTarget, check_switch, quote_switch

MID = date(2027, 3, 25)


class _Product:
    SKU, Name, PaymentAmount, Currency, Status = "B", "B", 1000, "USD", "active"


def _sub(seats: int | None, whole: int, day: int, end: date) -> Subscription:
    return Subscription("ACC#a", "SUB#s1#SKU#A", SKU="A", PaymentAmount=whole, PaymentDay=day, Currency="USD",
                        Status=SubscriptionStatus.ACTIVE, PaidThroughDate=end.isoformat(), Quantity=seats,
                        UnitAmount=None if seats is None else whole // seats,
                        NextPaymentDate=(end + timedelta(days=1)).isoformat())


def _paid(whole: int, day: int, start: date, end: date) -> Receipt:
    return Receipt(sub_id="s1", PeriodStart=start.isoformat(), PeriodEnd=end.isoformat(),
                   BillingDate=start.isoformat(), ProcessedAmount=period_amount(whole, day, start, end),
                   RefundedAmount=0)


def _per_seat(unit: int, interval: str = "month", low: int = 1, high: int | None = None) -> SwitchTarget:
    return SwitchTarget("B", "B", unit, "price_b", "USD", interval, 1, per_seat=True, min_quantity=low,
                        max_quantity=high)


def _said(sub: Subscription, target: SwitchTarget) -> str | None:
    try:
        check_switch(sub, _Product(), MID, target)
    except SwitchRefused as refused:
        return str(refused)
    return None


def test_the_seats_must_fit_the_new_price() -> None:
    end = date(2027, 4, 9)
    five, one = _sub(5, 5000, 10, end), _sub(None, 1000, 10, end)
    assert _said(five, _per_seat(2000)) is None
    assert _said(five, _per_seat(2000, low=6)) == "That price is sold for at least 6 seats: the subscription has 5."
    assert _said(five, _per_seat(2000, high=4)) == "That price is sold for at most 4 seats: the subscription has 5."
    assert _said(five, _per_seat(2000, low=5, high=5)) is None  # both bounds take their own number
    not_by_seat = SwitchTarget("B", "B", 2000, "price_b", "USD")
    assert _said(five, not_by_seat) == "That price is not sold by the seat: change to one seat first."
    assert _said(one, not_by_seat) is None  # one seat: as ever
    assert _said(one, _per_seat(2000, low=2)) == "That price is sold for at least 2 seats: the subscription has 1."


def test_five_seats_to_a_dearer_seat_keep_five_and_settle_the_days_left() -> None:
    """$10.00 a seat × 5 paid 10 March .. 9 April, switched on 25 March (16 of 31 days left)
    to $20.00 a seat: $100.00 a period; charged 16/31 × $100.00 less 16/31 × $50.00."""
    start, end = date(2027, 3, 10), date(2027, 4, 9)
    sub = _sub(5, 5000, 10, end)
    q = quote_switch(sub, _per_seat(2000), [_paid(5000, 10, start, end)], MID)
    assert (q.quantity, q.unit_amount, q.new_price, q.upgrade) == (5, 2000, 10000, True)
    assert (q.charge, q.credit, q.due_now) == (5161, 2581, 2580)
    yearly = quote_switch(sub, _per_seat(20000, "year"), [_paid(5000, 10, start, end)], MID)
    assert (yearly.new_price, yearly.charge, yearly.credit, yearly.new_period_end) == (
        100000, 100000, 2581, date(2028, 3, 24))  # a whole year of five seats less the unused days
    cheaper = quote_switch(sub, _per_seat(900), [_paid(5000, 10, start, end)], MID)
    assert (cheaper.upgrade, cheaper.new_price, cheaper.due_now, cheaper.effective) == (False, 4500, 0, end + timedelta(1))


@pytest.mark.parametrize("interval", ["month", "year"])
@settings(max_examples=30, deadline=None)
@given(day=st.integers(1, 28), month=st.integers(1, 12), into=st.integers(0, 40), old=st.integers(100, 5000),
       new=st.integers(100, 9000), seats=st.integers(2, 40))
def test_n_seats_cost_n_times_one_and_never_more_than_the_difference_of_the_days_left(
        interval: str, day: int, month: int, into: int, old: int, new: int, seats: int) -> None:
    """Over any payment day, date, prices and seats: the quote at N seats is N × the quote
    at one where no rounding occurs (each of its parts within N/2 + 1 of it otherwise), and
    an upgrade of the same cadence never charges, less its credit, more than the
    difference of the new and old whole prices over the days left (one minor unit per
    rounding: the charge's and the credit's)."""
    # paid for a whole period, made on its payment day (a first period cut short is a share
    # of the month it falls in: the days below count a whole one)
    start, end = first_period(day, date(2027, month, day))
    assert start.day == day
    today = min(end, start + timedelta(days=into))
    at_one = quote_switch(_sub(None, old, day, end), _per_seat(new, interval), [_paid(old, day, start, end)], today)
    at_n = quote_switch(_sub(seats, old * seats, day, end), _per_seat(new, interval),
                        [_paid(old * seats, day, start, end)], today)
    assert (at_n.upgrade, at_n.effective, at_n.new_price, at_n.quantity) == (
        at_one.upgrade, at_one.effective, new * seats, seats)
    days, left = (end - start).days + 1, (end - today).days + 1
    for part in ("charge", "credit"):
        one, n = getattr(at_one, part), getattr(at_n, part)
        assert abs(n - seats * one) <= seats / 2 + 1
    exact = [Fraction(new * left, days), Fraction(old * left, days)]
    if interval == "month" and all(share.denominator == 1 for share in exact):  # no rounding anywhere
        assert (at_n.charge, at_n.credit) == (seats * at_one.charge, seats * at_one.credit)
    if interval == "year":  # a new period from today: the whole year of N seats, exactly
        assert at_n.charge == seats * at_one.charge == seats * new
    if interval == "month" and at_n.upgrade:
        assert at_n.charge - at_n.credit <= Fraction((new - old) * seats * left, days) + 2
