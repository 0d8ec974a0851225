"""The retry schedule of outbound webhooks (billing/rules/webhook_retries.py), as properties:
no attempt after three days from the first, the last one at three days exactly, each delay
within its jitter, and the documented nominal times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from billing.rules.webhook_retries import (
    JITTER,
    RETRY_DELAYS,
    RETRY_WINDOW,
    next_attempt_at,
    schedule_offsets,
)

FIRST = datetime(2027, 3, 1, 9, tzinfo=UTC)


@given(st.lists(st.floats(min_value=0, max_value=1, exclude_max=True), min_size=30, max_size=30),
       st.lists(st.integers(min_value=0, max_value=3000), min_size=30, max_size=30))
def test_attempts_stop_at_three_days_and_each_delay_is_within_its_jitter(draws, lateness) -> None:
    failed_at, attempts, times = FIRST, 1, [FIRST]
    while True:
        nxt = next_attempt_at(first_attempt=FIRST, attempts=attempts, failed_at=failed_at,
                              rand=draws[attempts % len(draws)])
        if nxt is None:
            break
        nominal = RETRY_DELAYS[min(attempts, len(RETRY_DELAYS)) - 1]
        assert nxt <= FIRST + RETRY_WINDOW
        assert nxt == FIRST + RETRY_WINDOW or nominal * (1 - JITTER) <= nxt - failed_at <= nominal * (1 + JITTER)
        # the sender comes some milliseconds to minutes late; the attempt then fails at once
        failed_at = nxt + timedelta(milliseconds=lateness[attempts % len(lateness)])
        attempts += 1
        times.append(nxt)
    assert times == sorted(times) and failed_at >= FIRST + RETRY_WINDOW
    assert times[-1] == FIRST + RETRY_WINDOW  # the last attempt is made at three days exactly
    assert 11 <= len(times) <= 14


def test_the_nominal_schedule_in_the_docs() -> None:
    hours = [round(o.total_seconds() / 3600, 2) for o in schedule_offsets(30)]
    assert hours == [0.0, 0.0, 0.08, 0.58, 2.58, 7.58, 17.58, 27.58, 37.58, 47.58, 57.58, 67.58, 72.0]
