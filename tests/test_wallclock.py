"""The tests' own clock helper: a day constant is read again when a test starts, and a
reading close to midnight waits for the new day, so a run crossing midnight stays right."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime

import time_machine

from tests import wallclock

DECLARED_DAY = wallclock.per_test(__name__, "DECLARED_DAY", lambda now: now.date())


def test_a_reading_near_midnight_waits_for_the_new_day(monkeypatch) -> None:
    with time_machine.travel(datetime(2026, 11, 26, 23, 59, 10, tzinfo=UTC), tick=False) as traveller:
        waited: list[float] = []

        def sleep(seconds: float) -> None:
            waited.append(seconds)
            traveller.shift(seconds)

        monkeypatch.setattr(wallclock.time, "sleep", sleep)
        assert wallclock.now_away_from_midnight().date() == date(2026, 11, 27)
        assert waited == [51.0]


def test_a_reading_well_before_midnight_does_not_wait(monkeypatch) -> None:
    monkeypatch.setattr(wallclock.time, "sleep", lambda seconds: (_ for _ in ()).throw(AssertionError(seconds)))
    with time_machine.travel(datetime(2026, 11, 26, 23, 57, 0, tzinfo=UTC), tick=False):
        assert wallclock.now_away_from_midnight().date() == date(2026, 11, 26)


def test_a_declared_constant_is_read_again_when_a_test_starts(monkeypatch) -> None:
    with time_machine.travel(datetime(2027, 1, 2, 12, 0, tzinfo=UTC), tick=False):
        wallclock.refresh(monkeypatch)
    assert date(2027, 1, 2) == sys.modules[__name__].DECLARED_DAY


def test_a_test_runs_on_the_test_day_when_one_is_set(request) -> None:
    """make test-days sets RPAY_TEST_DAY: then "today" is that day for a test like this one,
    and with several days, each of them in turn."""
    from tests.conftest import TEST_DAYS

    callspec = getattr(request.node, "callspec", None)
    if len(TEST_DAYS) > 1:
        assert callspec is not None and callspec.params["test_day"] in TEST_DAYS
        expected = callspec.params["test_day"]
    else:
        expected = TEST_DAYS[0] if TEST_DAYS else datetime.now(tz=UTC).date().isoformat()
    assert date.today().isoformat() == expected
