"""Cadences: every N days, weeks, months or years (billing/rules/schedule.py).

Monthly x 1 is checked against a copy of the schedule as it was before cadences: the
same dates for every payment day and start."""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from itertools import islice

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules import schedule
from billing.rules.schedule import (
    Cadence,
    Interval,
    anchor_on_or_before,
    cadence_of,
    first_payment_date,
    first_period,
    is_anchor,
    new_cadence,
    next_payment_date,
    payment_dates,
    period_amount,
    period_end,
    prorate,
)

days = st.integers(min_value=1, max_value=31)
when = st.dates(min_value=date(2000, 1, 1), max_value=date(2090, 12, 31))


@st.composite
def cadences(draw: st.DrawFn) -> Cadence:
    interval = draw(st.sampled_from(list(Interval)))
    count = draw(st.integers(1, {Interval.DAY: 40, Interval.WEEK: 6, Interval.MONTH: 12, Interval.YEAR: 1}[interval]))
    return new_cadence(draw(days), draw(when), interval, count)


# --- the monthly schedule as it was before cadences (the reference) ---

def _old_anchor(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def _old_first(day: int, today: date) -> date:
    this = _old_anchor(today.year, today.month, day)
    if this >= today:
        return this
    y, m = schedule.add_months(today.year, today.month, 1)
    return _old_anchor(y, m, day)


def _old_next(day: int, after: date) -> date:
    candidate = _old_first(day, after)
    if candidate > after:
        return candidate
    y, m = schedule.add_months(after.year, after.month, 1)
    return _old_anchor(y, m, day)


def _old_on_or_before(day: int, on: date) -> date:
    this = _old_anchor(on.year, on.month, day)
    if this <= on:
        return this
    y, m = schedule.add_months(on.year, on.month, -1)
    return _old_anchor(y, m, day)


@given(day=days, on=when)
def test_monthly_cadence_gives_the_old_dates(day: int, on: date) -> None:
    for monthly in (day, Cadence(day), new_cadence(day, on), new_cadence(day, on, "month", 1)):
        assert first_payment_date(monthly, on) == _old_first(day, on)
        assert next_payment_date(monthly, on) == _old_next(day, on)
        assert anchor_on_or_before(monthly, on) == _old_on_or_before(day, on)
        assert period_end(monthly, on) == _old_first(day, on + timedelta(days=28)) - timedelta(days=1)


@given(cadence=cadences(), on=when)
def test_periods_tile_time_without_gap_or_overlap(cadence: Cadence, on: date) -> None:
    start = anchor_on_or_before(cadence, on)
    assert start <= on < next_payment_date(cadence, start)
    dates = list(islice(payment_dates(cadence, start), 14))
    assert dates[0] == start
    for earlier, later in zip(dates, dates[1:], strict=False):
        assert later > earlier
        # a regular period is the days from one date to the day before the next
        assert period_end(cadence, earlier) == later - timedelta(days=1)
        assert anchor_on_or_before(cadence, later - timedelta(days=1)) == earlier
        assert is_anchor(cadence, later) and not is_anchor(cadence, later - timedelta(days=1)) or cadence.days == 1


@given(cadence=cadences(), on=when)
def test_the_dates_are_the_cadence(cadence: Cadence, on: date) -> None:
    dates = list(islice(payment_dates(cadence, on), 8))
    assert dates[0] >= on and (dates[0] == on or next_payment_date(cadence, on) == dates[0])
    for earlier, later in zip(dates, dates[1:], strict=False):
        if cadence.months:
            # N months apart, always on the payment day clamped: never drifting
            assert (later.year * 12 + later.month) - (earlier.year * 12 + earlier.month) == cadence.months
            assert later.day == min(cadence.payment_day, calendar.monthrange(later.year, later.month)[1])
            assert cadence.anchor is None or (later.year * 12 + later.month
                                              - cadence.anchor.year * 12 - cadence.anchor.month) % cadence.months == 0
        else:
            assert (later - earlier).days == cadence.days
            assert cadence.anchor is not None and (later - cadence.anchor).days % cadence.days == 0


@given(day=days, on=when)
def test_every_n_weeks_keeps_its_weekday(day: int, on: date) -> None:
    cadence = new_cadence(day, on, "week", 2)
    for d in islice(payment_dates(cadence, on - timedelta(days=100)), 20):
        assert d.weekday() == on.weekday()
    assert first_payment_date(cadence, on) == on


def test_yearly_29_february_keeps_its_anniversary() -> None:
    yearly = new_cadence(29, date(2028, 2, 29), "year")
    assert yearly.anchor == date(2028, 2, 29)
    assert list(islice(payment_dates(yearly, date(2028, 2, 29)), 5)) == [
        date(2028, 2, 29), date(2029, 2, 28), date(2030, 2, 28), date(2031, 2, 28), date(2032, 2, 29)]
    assert period_end(yearly, date(2028, 2, 29)) == date(2029, 2, 27)
    assert period_end(yearly, date(2031, 2, 28)) == date(2032, 2, 28)
    assert next_payment_date(yearly, date(2029, 2, 28)) == date(2030, 2, 28)


def test_day_31_every_3_months_never_drifts() -> None:
    quarterly = new_cadence(31, date(2027, 1, 20), "month", 3)
    assert quarterly.anchor == date(2027, 1, 31)
    assert list(islice(payment_dates(quarterly, date(2027, 1, 20)), 6)) == [
        date(2027, 1, 31), date(2027, 4, 30), date(2027, 7, 31), date(2027, 10, 31), date(2028, 1, 31),
        date(2028, 4, 30)]
    # the first period is the prorated days to the anchor; the run's second one a full quarter
    assert first_period(quarterly, date(2027, 1, 20)) == (date(2027, 1, 20), date(2027, 1, 30))
    assert period_end(quarterly, date(2027, 1, 31)) == date(2027, 4, 29)


def test_new_cadence_anchors() -> None:
    # a year from the first payment day on or after the start: its month is the anniversary's
    assert new_cadence(10, date(2027, 1, 15), "year").anchor == date(2027, 2, 10)
    assert new_cadence(10, date(2027, 1, 15), "week", 2).anchor == date(2027, 1, 15)
    assert new_cadence(10, date(2027, 1, 15)).anchor is None
    # every 2 months counts its months from the first payment day's: only the plain monthly has no anchor
    assert new_cadence(10, date(2027, 1, 15), "month", 2).anchor == date(2027, 2, 10)
    with pytest.raises(ValueError):
        new_cadence(10, date(2027, 1, 15), "year", 4)
    with pytest.raises(ValueError):
        new_cadence(10, date(2027, 1, 15), "fortnight")
    with pytest.raises(ValueError):
        Cadence(10, Interval.WEEK, 1)  # weeks need their anchor date


class _Item:
    PaymentDay = 31
    Interval = "month"
    IntervalCount = 3
    IntervalAnchor = "2027-01-31"


def test_cadence_of_an_item() -> None:
    assert cadence_of(_Item()) == Cadence(31, Interval.MONTH, 3, date(2027, 1, 31))

    class Old:  # written before cadences: monthly
        PaymentDay = 12
    assert cadence_of(Old()) == Cadence(12)


prices = st.integers(min_value=0, max_value=10_000_000)


@given(cadence=cadences(), on=when, price=prices)
def test_a_full_period_costs_the_price(cadence: Cadence, on: date, price: int) -> None:
    start = anchor_on_or_before(cadence, on)
    assert period_amount(price, cadence, start, period_end(cadence, start)) == price


@given(cadence=cadences(), on=when, length=st.integers(0, 800), cut=st.integers(0, 800), price=prices)
def test_proration_bounds(cadence: Cadence, on: date, length: int, cut: int, price: int) -> None:
    """Any run of days costs its exact share of the periods it touches within half a minor
    unit per period touched, and splitting it anywhere charges no day twice or never
    (the two parts add up to the whole within that rounding)."""
    end = on + timedelta(days=length)
    amount = period_amount(price, cadence, on, end)
    exact = 0.0
    pieces = 0
    cursor = on
    while cursor <= end:
        first = anchor_on_or_before(cadence, cursor)
        following = next_payment_date(cadence, first)
        last = min(end, following - timedelta(days=1))
        exact += price * ((last - cursor).days + 1) / (following - first).days
        pieces += 1
        cursor = last + timedelta(days=1)
    assert abs(amount - exact) <= 0.5 * pieces + 1e-6
    assert amount >= 0
    middle = on + timedelta(days=min(cut, length))
    if middle < end:
        split = period_amount(price, cadence, on, middle) + period_amount(price, cadence, middle + timedelta(days=1), end)
        assert abs(split - amount) <= 1


@given(cadence=cadences(), on=when)
def test_first_period_ends_the_day_before_a_date_of_the_cadence(cadence: Cadence, on: date) -> None:
    start, end = first_period(cadence, on)
    assert start == on and end >= on
    assert is_anchor(cadence, end + timedelta(days=1))
    # never longer than the prorated days plus a full period
    assert (end - start).days + 1 <= 2 * (next_payment_date(cadence, anchor_on_or_before(cadence, on))
                                          - anchor_on_or_before(cadence, on)).days


@given(cadence=cadences(), on=when)
def test_period_end_is_at_least_the_shortest_period(cadence: Cadence, on: date) -> None:
    end = period_end(cadence, on)
    assert (end - on).days + 1 >= cadence.min_period_days
    assert is_anchor(cadence, end + timedelta(days=1))


def test_prorate_is_the_whole_price_for_the_whole_period() -> None:
    assert prorate(12000, 366, 366) == 12000
    assert prorate(12000, 1, 366) == 33


@given(cadence=cadences(), start=when, into=st.integers(0, 2000))
def test_a_charge_still_paying_is_inside_the_window_read_back(cadence: Cadence, start: date, into: int) -> None:
    """A cancel now reads the receipts from ``charges_paying_from``: every charge whose
    period (a regular or a prorated-plus-one, ``period_end``) is not over is in it."""
    end = period_end(cadence, start)
    today = start + timedelta(days=into % max(1, (end - start).days))
    assert today < end or end == start
    assert schedule.charges_paying_from(cadence, today) <= start
    # monthly: the three months the window always was
    assert schedule.charges_paying_from(15, today) == schedule.months_before(today, 3)
