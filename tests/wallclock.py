"""The wall clock's day, for tests that cannot freeze time.

Tests that meet localstripe (a separate process stamping ``created`` from the real clock)
or rpay's pages that read "today" compare a day they computed with one the code computes.
Read once at import, such a day is stale when a run crosses midnight (a full run takes
half an hour); read during a test, it can still change in the middle of one. So a test
module declares its constants with ``per_test``, and they are read again when each test
that needs them starts (a test of such a module, or any test using localstripe, whose
helpers may be those modules'). Within two minutes of midnight (UTC) the reading first
waits for the new day: that wait happens on about one run in seven hundred.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

MARGIN = timedelta(minutes=2)
T = TypeVar("T")

# module name -> {constant name -> its value at a moment}
_DECLARED: dict[str, dict[str, Callable[[datetime], Any]]] = {}


def now_away_from_midnight(margin: timedelta = MARGIN) -> datetime:
    """The current UTC time, at least ``margin`` before the next midnight (waiting if needed)."""
    now = datetime.now(tz=UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    if midnight - now < margin:
        time.sleep((midnight - now).total_seconds() + 1)
        now = datetime.now(tz=UTC)
    return now


def per_test(module_name: str, name: str, of_now: Callable[[datetime], T]) -> T:
    """Declare ``module_name.name`` as ``of_now(the moment a test starts)``; the value now."""
    _DECLARED.setdefault(module_name, {})[name] = of_now
    return of_now(datetime.now(tz=UTC))


def wanted_by(request: pytest.FixtureRequest) -> bool:
    return request.module.__name__ in _DECLARED or "localstripe" in request.fixturenames


def refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every declared constant, from one reading of the clock (away from midnight)."""
    now = now_away_from_midnight()
    for module_name, constants in _DECLARED.items():
        module = sys.modules[module_name]
        for name, of_now in constants.items():
            monkeypatch.setattr(module, name, of_now(now))
