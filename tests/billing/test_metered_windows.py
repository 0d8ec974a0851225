"""The days a metered price bills of a period (billing/rules/metered_items.py), for any
period and any day a price is replaced on: the old price's days and the new one's never
overlap, and together they are the period's days, each billed exactly once (M8 across a
change of price); a price removed bills none of its days after its last."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from billing.rules.metered_items import billed_from, billed_until

DAYS = st.dates(min_value=date(2026, 1, 1), max_value=date(2028, 12, 31))


@given(start=DAYS, length=st.integers(1, 400), last=DAYS)
def test_the_old_and_the_new_price_share_a_period_s_days_without_overlap(start: date, length: int,
                                                                        last: date) -> None:
    end = start + timedelta(days=length)
    first = (last + timedelta(days=1)).isoformat()  # the new price's first day
    old = (start, billed_until(end, last.isoformat()))
    new = (billed_from(start, first), end)
    old_days = max(0, (old[1] - old[0]).days)
    new_days = max(0, (new[1] - new[0]).days)
    # every day of [start, end) billed once: at the old price up to its last day, the new after
    assert old_days + new_days == length
    assert old[1] <= new[0] or old_days == 0 or new_days == 0


@given(start=DAYS, length=st.integers(1, 400), last=DAYS)
def test_a_price_removed_bills_no_day_after_its_last(start: date, length: int, last: date) -> None:
    end = start + timedelta(days=length)
    until = billed_until(end, last.isoformat())
    assert until <= end and until <= last + timedelta(days=1)
    # and every day up to its last that the period holds
    assert until == min(end, last + timedelta(days=1))
    assert billed_until(end, None) == end and billed_from(start, None) == start
