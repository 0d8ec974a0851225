"""``GET /api/v1/events`` (and ``access.events_after`` under it) pages completely: every
live event, in order, exactly once, however the events are spread over the days, whichever
of them have expired (DynamoDB deletes expired items lazily, so a day may still hold them)
and whatever ``limit`` is. Walked page by page, as a client does, and compared with the
live events in id order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from billing import access
from billing.models import MerchantEvent, MerchantEventType
from tests.api.conftest import ApiClient

NOW = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)
RETENTION_DAYS = 30
SETTLED = timedelta(seconds=10)  # older than the API's settling time: every event made is listed

# An event: how many days before today (0 = today, RETENTION_DAYS = the oldest day kept),
# the second of that day, and whether its TTL has passed (not yet deleted by DynamoDB).
event_specs = st.lists(st.tuples(st.integers(0, RETENTION_DAYS) | st.sampled_from([RETENTION_DAYS, 0]),
                                 st.integers(0, 86399), st.booleans()), max_size=30)
limits = st.integers(1, 12)


def make_events(specs: list[tuple[int, int, bool]]) -> list[MerchantEvent]:
    made = []
    for days_back, second, expired in specs:
        day = (NOW - timedelta(days=days_back)).date()
        moment = min(datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=second), NOW - SETTLED)
        event = access.new_merchant_event(MerchantEventType.SUBSCRIPTION_UPDATED, account_id="a1",
                                          object_type="subscription", object_id="s1", data={}, at=moment)
        # Either past (expired, still there) or ahead of now, whatever the day it was made.
        event.TTL = NOW + (timedelta(seconds=-1 - second) if expired else timedelta(seconds=1 + second))
        event.save()
        made.append(event)
    return made


@contextmanager
def events(specs: list[tuple[int, int, bool]]) -> Iterator[list[str]]:
    """The events made for one example, and the ids a complete walk must list: the live
    ones, in id order. They are deleted afterwards (the table outlives the example)."""
    made = make_events(specs)
    try:
        yield sorted(e.EventId for e in made if e.TTL > NOW)
    finally:
        for event in made:
            event.delete()


def walk(read_page: Callable[[str | None], tuple[list[str], str | None]], limit: int, total: int) -> list[str]:
    """Every page from the start: each but the last is full (``limit`` events)."""
    seen: list[str] = []
    after: str | None = None
    for _ in range(total + 2):
        ids, after = read_page(after)
        seen += ids
        if after is None:
            return seen
        assert len(ids) == limit, (len(ids), limit)
    raise AssertionError(f"more pages than events: {seen}")


def api_pages(api: ApiClient, limit: int) -> Callable[[str | None], tuple[list[str], str | None]]:
    def read_page(after: str | None) -> tuple[list[str], str | None]:
        response = api.get("/events", limit=limit, **({"after": after} if after else {}))
        assert response.status_code == 200, response.content
        body = response.json()
        return [e["id"] for e in body["data"]], body["next_after"] if body["has_more"] else None

    return read_page


def access_pages(limit: int) -> Callable[[str | None], tuple[list[str], str | None]]:
    def read_page(after: str | None) -> tuple[list[str], str | None]:
        page, more = access.events_after(after, limit=limit, until=access.settled_before())
        return [e.EventId for e in page], more

    return read_page


HYPOTHESIS = hypothesis_settings(max_examples=40, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.django_db
def test_the_api_lists_every_live_event_once_in_order(read_api: ApiClient, settings) -> None:
    settings.MERCHANT_EVENT_RETENTION_DAYS = RETENTION_DAYS
    settings.API_RATE_LIMIT = 10**6

    @HYPOTHESIS
    @given(specs=event_specs, limit=limits)
    def complete(specs, limit) -> None:
        with time_machine.travel(NOW, tick=False), events(specs) as live:
            assert walk(api_pages(read_api, limit), limit, len(specs)) == live

    complete()


@pytest.mark.django_db(databases=[])
def test_events_after_pages_every_live_event_once_in_order_on_each_engine(table, settings) -> None:
    settings.MERCHANT_EVENT_RETENTION_DAYS = RETENTION_DAYS

    @settings_for(table)
    @given(specs=event_specs, limit=limits)
    def complete(specs, limit) -> None:
        with time_machine.travel(NOW, tick=False), events(specs) as live:
            assert walk(access_pages(limit), limit, len(specs)) == live

    complete()


def settings_for(engine: str) -> hypothesis_settings:
    # DynamoDB Local answers over HTTP: fewer examples there.
    return HYPOTHESIS if engine == "moto" else hypothesis_settings(HYPOTHESIS, max_examples=15)


@pytest.mark.django_db
def test_an_oldest_day_starting_with_expired_events_keeps_its_live_ones(read_api: ApiClient, settings) -> None:
    """The case seen: the oldest kept day's first events are past their TTL, its later ones
    are not; a short page used to move on to the next day, past them."""
    settings.MERCHANT_EVENT_RETENTION_DAYS = RETENTION_DAYS
    specs = [(RETENTION_DAYS, 60 * n, True) for n in range(5)] + [(RETENTION_DAYS, 7200 + n, False) for n in range(3)]
    specs += [(1, 100, False)]
    with time_machine.travel(NOW, tick=False), events(specs) as live:
        first = read_api.get("/events", limit=2).json()
        assert [e["id"] for e in first["data"]] == live[:2] and first["has_more"]
        assert walk(api_pages(read_api, 2), 2, len(specs)) == live
