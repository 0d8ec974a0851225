"""The anchor-day schedule, reminder and retry dates (billing/rules/schedule.py)."""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from itertools import islice

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules import schedule
from billing.rules.schedule import (
    anchor_date,
    first_payment_date,
    first_period,
    months_before,
    next_payment_date,
    next_retry_date,
    payment_dates,
    period_end,
    reminder_date,
    retry_dates,
)
from core.clock import billing_today

days = st.integers(min_value=1, max_value=31)
starts = st.dates(min_value=date(2000, 1, 1), max_value=date(2090, 12, 31))


def test_day_31_keeps_its_anchor_through_short_months() -> None:
    dates = list(islice(payment_dates(31, date(2027, 1, 1)), 5))
    assert dates == [date(2027, 1, 31), date(2027, 2, 28), date(2027, 3, 31), date(2027, 4, 30), date(2027, 5, 31)]


def test_leap_february() -> None:
    assert list(islice(payment_dates(30, date(2028, 1, 31)), 3)) == [
        date(2028, 2, 29), date(2028, 3, 30), date(2028, 4, 30)
    ]
    assert anchor_date(2028, 2, 31) == date(2028, 2, 29)
    assert anchor_date(2100, 2, 29) == date(2100, 2, 28)


@pytest.mark.parametrize("bad", [0, 32, -1])
def test_payment_day_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError):
        anchor_date(2027, 1, bad)


@given(day=days, start=starts)
def test_schedule_is_one_anchor_date_per_month(day: int, start: date) -> None:
    dates = list(islice(payment_dates(day, start), 24))
    assert dates[0] >= start
    for earlier, later in zip(dates, dates[1:], strict=False):
        assert later > earlier
        # consecutive calendar months, no month skipped or repeated
        assert (later.year * 12 + later.month) - (earlier.year * 12 + earlier.month) == 1
    for d in dates:
        last = calendar.monthrange(d.year, d.month)[1]
        assert d.day == min(day, last)


@given(day=days, start=starts)
def test_first_payment_is_the_next_occurrence(day: int, start: date) -> None:
    first = first_payment_date(day, start)
    assert first >= start
    # nothing between start and first is an anchor date
    probe = start
    while probe < first:
        assert probe != anchor_date(probe.year, probe.month, day)
        probe += timedelta(days=1)


@given(day=days, after=starts)
def test_next_payment_date_is_strictly_after(day: int, after: date) -> None:
    nxt = next_payment_date(day, after)
    assert nxt > after
    assert (nxt.year * 12 + nxt.month) - (after.year * 12 + after.month) in (0, 1)


@given(day=days, today=starts)
def test_first_period(day: int, today: date) -> None:
    # Rule changed (M1): the first payment is taken at subscribing, for the days
    # up to the first anchor date (was: the next anchor date after today, unpaid till then).
    start, end = first_period(day, today)
    assert start == today and end >= today
    assert end + timedelta(days=1) == first_payment_date(day, today + timedelta(days=1)) or \
        end == period_end(day, today)


def test_reminder_seven_days_before() -> None:
    # The one reminder rule (schedule.reminder_date): days_before earlier, never before
    # tomorrow, never after the payment. (It replaced a test-only variant that allowed today.)
    assert reminder_date(date(2027, 3, 31), 7, today=date(2027, 3, 1)) == date(2027, 3, 24)
    assert reminder_date(date(2027, 3, 2), 7, today=date(2027, 2, 28)) == date(2027, 3, 1)
    assert reminder_date(date(2027, 3, 1), 7, today=date(2027, 3, 1)) == date(2027, 3, 1)


@given(payment=starts, before=st.integers(min_value=0, max_value=20), lead=st.integers(min_value=-5, max_value=40))
def test_reminder_date_bounds(payment: date, before: int, lead: int) -> None:
    today = payment - timedelta(days=lead)
    remind = reminder_date(payment, before, today)
    assert remind >= payment - timedelta(days=before)
    if payment > today:
        assert today < remind <= payment


def test_retry_dates() -> None:
    # Still the schedule helper; the batch now counts retries from the run date
    # (schedule.retry_after, tests/billing/test_money_rules.py).
    assert retry_dates(date(2027, 1, 31), [1, 3, 5]) == [date(2027, 2, 1), date(2027, 2, 3), date(2027, 2, 5)]
    assert next_retry_date(date(2027, 1, 31), [1, 3, 5], 2) == date(2027, 2, 5)
    assert next_retry_date(date(2027, 1, 31), [1, 3, 5], 3) is None


def test_months_before_clamps() -> None:
    assert months_before(date(2026, 8, 31), 6) == date(2026, 2, 28)
    assert months_before(date(2026, 11, 22), 6) == date(2026, 5, 22)


def test_billing_today_uses_the_time_zone() -> None:
    from datetime import UTC, datetime

    late_utc = datetime(2026, 11, 22, 23, 30, tzinfo=UTC)
    assert billing_today("UTC", late_utc) == date(2026, 11, 22)
    assert billing_today("Asia/Tokyo", late_utc) == date(2026, 11, 23)


# --- retry days, payment days out of range, one-day periods ---------------------------

D = date(2027, 3, 15)


def test_a_retry_day_of_zero_never_charges_on_the_billing_day():
    assert schedule.retry_dates(D, [0, 2, 2, 1]) == [date(2027, 3, 16), date(2027, 3, 17)]
    assert schedule.next_retry_date(D, [0, 3], 0) == date(2027, 3, 18)
    assert schedule.next_retry_date(D, [0, 3], 1) is None
    assert schedule.retry_after(D, [0, 2, 5], 0) == date(2027, 3, 17)


def test_the_first_retry_waits_the_first_retry_day_then_the_gaps():
    assert schedule.retry_after(D, [5, 2], 0) == date(2027, 3, 17)  # 2 days, not the gap 5 - 2
    assert schedule.retry_after(D, [2, 5], 1) == date(2027, 3, 18)
    assert schedule.retry_after(D, [2, 5], 2) is None
    assert schedule.retry_after(D, [3, 3, 4], 1) == date(2027, 3, 16)  # duplicate days: at least one day


def test_a_payment_day_out_of_range_is_refused_with_its_rule():
    with pytest.raises(ValueError, match="^payment day must be 1-31, not 32$"):
        schedule.check_payment_day(32)


def test_an_anchor_date_is_its_own_latest_anchor():
    assert schedule.anchor_on_or_before(15, D) == D
    assert schedule.anchor_on_or_before(15, date(2027, 3, 14)) == date(2027, 2, 15)
    assert schedule.anchor_on_or_before(31, date(2027, 2, 28)) == date(2027, 2, 28)


def test_a_one_day_period_costs_one_days_share_and_an_empty_one_is_refused():
    # 15 Mar .. 14 Apr is a 31-day anchor period: one day of 3100 is 100.
    assert schedule.period_amount(3100, 15, D, D) == 100
    with pytest.raises(ValueError, match="^empty period 2027-03-15..2027-03-14$"):
        schedule.period_amount(3100, 15, D, date(2027, 3, 14))
