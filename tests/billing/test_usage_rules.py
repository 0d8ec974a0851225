"""billing/rules/usage.py under hypothesis: however a period's events are split over days
and shards (and in whatever order the partials are merged), each aggregation gives what its
definition gives over the events themselves; and what an event must be to be counted."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.models import MeterAggregation
from billing.rules.usage import (
    EMPTY,
    MAX_VALUE,
    EventRefused,
    Partial,
    combine,
    day_of,
    event_moment,
    event_value,
    expected,
    merge,
    period_days,
    quantity,
)

values = st.decimals(min_value=0, max_value=Decimal(10) ** 6, places=3, allow_nan=False, allow_infinity=False)
events = st.lists(st.tuples(values, st.integers(1_700_000_000, 1_700_100_000), st.text("abcdef", min_size=1,
                                                                                          max_size=4)),
                  unique_by=lambda e: e[2], max_size=40)
partials = st.builds(lambda e: merge([Partial.of_event(*x) for x in e]), events)


def split(items: list, cuts: list[int]) -> list[list]:
    """``items`` cut into groups (days, shards) at ``cuts``."""
    points = sorted({c % (len(items) + 1) for c in cuts})
    bounds = [0, *points, len(items)]
    return [items[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@given(events, st.lists(st.integers(0, 100), max_size=6), st.randoms())
def test_any_split_and_order_of_the_partials_gives_the_definition(sent, cuts, rng) -> None:
    groups = split(sent, cuts)
    group_partials = [merge([Partial.of_event(*event) for event in group]) for group in groups]
    rng.shuffle(group_partials)
    total = merge(group_partials)
    for aggregation in (MeterAggregation.COUNT, MeterAggregation.SUM, MeterAggregation.MAX, MeterAggregation.LAST):
        assert quantity(aggregation, total) == expected(aggregation, sent)
    assert quantity(MeterAggregation.UNIQUE_COUNT, total, len({v for v, _, _ in sent})) == \
        expected(MeterAggregation.UNIQUE_COUNT, sent)


@given(partials, partials, partials)
def test_combine_is_associative_and_commutative_with_the_empty_partial(a, b, c) -> None:
    assert combine(a, combine(b, c)) == combine(combine(a, b), c)
    assert combine(a, b) == combine(b, a)
    assert combine(a, EMPTY) == a == combine(EMPTY, a)


@given(st.decimals(min_value=0, max_value=MAX_VALUE - 1, places=6, allow_nan=False, allow_infinity=False))
def test_a_storable_value_is_taken_exactly(value) -> None:
    for raw in (value, str(value)):
        taken = event_value(raw, MeterAggregation.SUM)
        assert taken == value and len(taken.as_tuple().digits) <= 38


@given(st.one_of(st.decimals(allow_nan=True, allow_infinity=True), st.floats(), st.text(max_size=30),
                 st.booleans(), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                                                      max_size=2)))
def test_any_value_is_taken_or_refused_naming_value(raw) -> None:
    try:
        taken = event_value(raw, MeterAggregation.MAX)
    except EventRefused as refused:
        assert refused.param == "value" and refused.reason in ("invalid_value", "missing_value")
    else:
        assert taken.is_finite() and 0 <= taken < MAX_VALUE and -taken.as_tuple().exponent <= 6


def test_count_needs_no_value_and_unique_count_takes_text() -> None:
    assert event_value(None, MeterAggregation.COUNT) == 1
    assert event_value("user-7", MeterAggregation.UNIQUE_COUNT) == "user-7"
    assert event_value(Decimal("1.500"), MeterAggregation.UNIQUE_COUNT) == event_value("1.5", MeterAggregation.SUM)
    assert str(event_value("1E+1", MeterAggregation.SUM)) == "10" and str(event_value("0.0", MeterAggregation.MAX)) == "0"
    assert str(event_value(Decimal("2.50"), MeterAggregation.UNIQUE_COUNT)) == "2.5"
    with pytest.raises(EventRefused):
        event_value("user-7", MeterAggregation.SUM)
    with pytest.raises(EventRefused):
        event_value(None, MeterAggregation.LAST)


NOW = datetime(2027, 3, 10, 12, 0, 0, tzinfo=UTC)


@given(st.integers(-10**12, 10**12))
def test_a_timestamp_is_within_35_days_back_and_5_minutes_ahead(offset) -> None:
    seconds = int(NOW.timestamp()) + offset
    try:
        taken = event_moment(seconds, NOW)
    except EventRefused as refused:
        assert refused.param == "timestamp"
        assert offset < -35 * 86400 or offset > 300
    else:
        assert taken == seconds and -35 * 86400 <= offset <= 300


def test_an_events_day_is_its_billing_time_zones_day() -> None:
    assert day_of(int(datetime(2027, 3, 31, 23, 59, 59, tzinfo=UTC).timestamp()), "UTC") == "2027-03-31"
    assert day_of(int(datetime(2027, 4, 1, tzinfo=UTC).timestamp()), "UTC") == "2027-04-01"
    # east of UTC the day has begun; west of it, not yet ended
    assert day_of(int(datetime(2027, 3, 31, 15, tzinfo=UTC).timestamp()), "Asia/Tokyo") == "2027-04-01"
    assert day_of(int(datetime(2027, 3, 31, 14, 59, 59, tzinfo=UTC).timestamp()), "Asia/Tokyo") == "2027-03-31"
    assert day_of(int(datetime(2027, 4, 1, 3, tzinfo=UTC).timestamp()), "America/New_York") == "2027-03-31"
    # a day of 23 hours (summer time begins in Berlin on 28 March 2027): its last second and the next day's first
    assert day_of(int(datetime(2027, 3, 28, 21, 59, 59, tzinfo=UTC).timestamp()), "Europe/Berlin") == "2027-03-28"
    assert day_of(int(datetime(2027, 3, 28, 22, tzinfo=UTC).timestamp()), "Europe/Berlin") == "2027-03-29"
    assert period_days(date(2027, 3, 1), date(2027, 4, 1)) == ("2027-03-01", "2027-03-31")
    with pytest.raises(ValueError):
        period_days(date(2027, 3, 1), date(2027, 3, 1))
    assert event_moment(Decimal(int(NOW.timestamp())), NOW) == int(NOW.timestamp())
    for bad in (True, 1.5, Decimal("1700000000.5"), "now", None):
        with pytest.raises(EventRefused):
            event_moment(bad, NOW - timedelta(0))
