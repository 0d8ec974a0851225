"""``POST /api/v1/meter_events`` and the meters' routes (docs/USAGE.md): an event is
accepted once, a repeat of its identifier is a duplicate counted once, each refusal names
its reason (the error's type) and its field; a batch answers per event."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.access import usage as metered
from billing.actions import meters as meter_actions
from billing.models import MeterAggregation
from tests.api.conftest import error_of
from tests.builders import make_account

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 10, 12, 0, 0, tzinfo=UTC)
TS = int(NOW.timestamp())


@pytest.fixture
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def meters(moto_table) -> None:
    for name, aggregation in (("api_calls", MeterAggregation.SUM), ("seats", MeterAggregation.MAX),
                              ("users", MeterAggregation.UNIQUE_COUNT), ("logins", MeterAggregation.COUNT),
                              ("storage", MeterAggregation.LAST)):
        meter_actions.add_meter(name, name.title(), aggregation, actor="test")


def event(account_id: str, identifier: str, value=1, **extra) -> dict:
    return {"event_name": "api_calls", "customer": account_id, "identifier": identifier, "value": value,
            "timestamp": TS, **extra}


def used(account_id: str, name: str = "api_calls"):
    return metered.usage_for_period(account_id, name, date(2027, 3, 1), date(2027, 4, 1))


def test_an_event_is_accepted_and_a_repeat_is_a_duplicate_counted_once(write_api, meters, frozen) -> None:
    account = make_account()
    first = write_api.post("/meter_events", event(account.account_id, "req-1", 7))
    assert first.status_code == 200 and first.json()["status"] == "accepted"
    again = write_api.post("/meter_events", event(account.account_id, "req-1", 7))
    assert again.status_code == 200 and again.json()["status"] == "duplicate", again.json()
    assert used(account.account_id) == 7
    write_api.post("/meter_events", event(account.account_id, "req-2", "2.5"))
    assert used(account.account_id) == 9.5


@pytest.mark.parametrize(("change", "reason", "param"), [
    ({"timestamp": TS - 35 * 86400 - 1}, "timestamp_too_old", "timestamp"),
    ({"timestamp": TS + 301}, "timestamp_in_future", "timestamp"),
    ({"timestamp": "yesterday"}, "invalid_timestamp", "timestamp"),
    ({"customer": "0000000000000000"}, "unknown_customer", "customer"),
    ({"customer": "a#b"}, "unknown_customer", "customer"),
    ({"event_name": "no_such_meter"}, "unknown_event_name", "event_name"),
    ({"event_name": None}, "missing_event_name", "event_name"),
    ({"value": "ten"}, "invalid_value", "value"),
    ({"value": [1]}, "invalid_value", "value"),
    ({"value": True}, "invalid_value", "value"),
    ({"value": -1}, "invalid_value", "value"),
    ({"value": None}, "missing_value", "value"),
    ({"identifier": None}, "invalid_identifier", "identifier"),
    ({"identifier": "x" * 101}, "invalid_identifier", "identifier"),
])
def test_each_refusal_names_its_reason_and_field(write_api, meters, frozen, change, reason, param) -> None:
    account = make_account()
    response = write_api.post("/meter_events", {**event(account.account_id, "req-1"), **change})
    assert response.status_code == 400
    error = error_of(response)
    assert (error["type"], error["param"]) == (reason, param), error
    assert used(account.account_id) == 0


@pytest.mark.parametrize("raw_value", ["1e400", "1E+21", "123456789012345678901234567890", "0.0000001",
                                       '"1e999999999"', '"NaN"', '"Infinity"', '"-0.5"', "1" * 5000])
def test_hostile_numbers_are_refused(write_api, meters, frozen, raw_value) -> None:
    account = make_account()
    body = json.dumps(event(account.account_id, "req-1")).replace('"value": 1', f'"value": {raw_value}')
    response = write_api.post("/meter_events", raw=body)
    assert response.status_code == 400
    assert error_of(response)["param"] == "value"
    assert used(account.account_id) == 0


@pytest.mark.parametrize("raw", ['{"event_name": "api_calls", "value": NaN}', '{"value": Infinity}',
                                 "[" * 100000, "not json"])
def test_a_body_that_is_not_json_is_a_400(write_api, meters, raw) -> None:
    response = write_api.post("/meter_events", raw=raw)
    assert response.status_code == 400 and error_of(response)["message"].startswith("The body is not valid JSON")


def test_an_event_of_a_billed_day_is_refused(write_api, meters, frozen) -> None:
    account = make_account()
    metered.mark_billed(account.account_id, "api_calls", date(2027, 3, 9))
    metered.mark_billed(account.account_id, "api_calls", date(2027, 3, 1))  # never moves back
    assert metered.billed_through(account.account_id, "api_calls") == "2027-03-09"
    response = write_api.post("/meter_events", event(account.account_id, "old", timestamp=TS - 86400))
    assert response.status_code == 400 and error_of(response)["type"] == "period_billed"
    assert error_of(response)["param"] == "timestamp"
    assert write_api.post("/meter_events", event(account.account_id, "new")).json()["status"] == "accepted"
    assert used(account.account_id) == 1


def test_a_closed_account_takes_no_usage(write_api, meters, frozen) -> None:
    from billing.access import mark_account_closed
    account = make_account()
    mark_account_closed(account.account_id, "2027-03-01T00:00:00+00:00")
    response = write_api.post("/meter_events", event(account.account_id, "req-1"))
    assert response.status_code == 400 and error_of(response)["type"] == "unknown_customer"


def test_a_batch_of_100_answers_each_event(write_api, meters, frozen, ddb_requests) -> None:
    account = make_account()
    events = [event(account.account_id, f"req-{i % 90}", 1) for i in range(98)]  # 8 repeats
    events += [event("0000000000000000", "x"), event(account.account_id, "bad", "ten")]
    write_api.get("/meters")  # the key's first use of the minute records it (one UpdateItem)
    ddb_requests.reset()
    response = write_api.post("/meter_events", {"events": events})
    assert response.status_code == 200
    body = response.json()
    assert (body["accepted"], body["duplicate"], body["refused"]) == (90, 8, 2)
    assert [a["index"] for a in body["data"]] == list(range(100))
    assert body["data"][90]["status"] == "duplicate"
    assert body["data"][98]["error"]["type"] == "unknown_customer"
    assert body["data"][99]["error"] == {"type": "invalid_value", "message": "value is not a number.",
                                         "param": "value"}
    # The key's GetItem and rate UpdateItem, the meter's GetItem, one TransactWriteItems per
    # event that reached the table (the bad value never did).
    assert ddb_requests.by_name()["TransactWriteItems"] == 99
    assert ddb_requests.total == 99 + 3
    assert used(account.account_id) == 90


def test_a_batch_of_101_or_none_is_refused_whole(write_api, meters, frozen) -> None:
    account = make_account()
    for events in ([event(account.account_id, f"r{i}") for i in range(101)], [], "x"):
        response = write_api.post("/meter_events", {"events": events})
        assert response.status_code == 400 and error_of(response)["param"] == "events"
    assert used(account.account_id) == 0


def test_one_event_costs_one_transaction(write_api, meters, frozen, ddb_requests) -> None:
    account = make_account()
    write_api.get("/meters")  # the key's first use of the minute records it (one UpdateItem)
    ddb_requests.reset()
    write_api.post("/meter_events", event(account.account_id, "req-1"))
    assert ddb_requests.by_name() == {"GetItem": 2, "UpdateItem": 1, "TransactWriteItems": 1}


def test_a_max_event_below_the_max_is_counted_without_raising_it(write_api, meters, frozen, ddb_requests) -> None:
    account = make_account()
    for identifier, value in (("a", 5), ("b", 3), ("c", 9), ("d", 9)):
        write_api.post("/meter_events", event(account.account_id, identifier, value, event_name="seats"))
    assert used(account.account_id, "seats") == 9
    ddb_requests.reset()
    write_api.post("/meter_events", event(account.account_id, "e", 1, event_name="seats"))
    # the conditional SET cancels the first transaction; the second counts it without the SET
    assert ddb_requests.by_name()["TransactWriteItems"] <= 2


def test_the_meters_routes(write_api, read_api, meters, frozen) -> None:
    listed = read_api.get("/meters").json()
    assert [m["event_name"] for m in listed["data"]] == ["api_calls", "logins", "seats", "storage", "users"]
    made = write_api.post("/meters", {"event_name": "gpu_minutes", "name": "GPU minutes", "aggregation": "sum"},
                          key="m-1")
    assert made.status_code == 201 and made.json()["aggregation"] == "sum"
    again = write_api.post("/meters", {"event_name": "gpu_minutes", "name": "GPU minutes", "aggregation": "sum"},
                           key="m-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    taken = write_api.post("/meters", {"event_name": "gpu_minutes", "name": "Other", "aggregation": "max"})
    assert taken.status_code == 409
    bad = write_api.post("/meters", {"event_name": "GPU Minutes", "name": "x", "aggregation": "sum"})
    assert bad.status_code == 400 and error_of(bad)["param"] == "event_name"
    wrong = write_api.post("/meters", {"event_name": "y", "name": "x", "aggregation": "median"})
    assert wrong.status_code == 400
    assert read_api.post("/meters", {"event_name": "z", "name": "x", "aggregation": "sum"}).status_code == 403


def test_usage_so_far(write_api, read_api, meters, frozen) -> None:
    account = make_account()
    for day in range(5):
        for n in range(3):
            write_api.post("/meter_events", event(account.account_id, f"d{day}-{n}", "1.25",
                                                  timestamp=TS - day * 86400))
    so_far = read_api.get("/meters/api_calls/usage", customer=account.account_id).json()
    assert so_far == {"object": "meter_usage", "event_name": "api_calls", "customer": account.account_id,
                      "aggregation": "sum", "from": "2027-03-01", "to": "2027-03-11", "value": "18.75"}
    two_days = read_api.get("/meters/api_calls/usage", customer=account.account_id, **{"from": "2027-03-09",
                                                                                       "to": "2027-03-11"})
    assert two_days.json()["value"] == "7.5"
    assert read_api.get("/meters/nothing/usage", customer=account.account_id).status_code == 404
    assert read_api.get("/meters/api_calls/usage", customer="0000000000000000").status_code == 404
    backwards = read_api.get("/meters/api_calls/usage", customer=account.account_id,
                             **{"from": "2027-03-09", "to": "2027-03-01"})
    assert backwards.status_code == 400


def test_identifiers_are_remembered_35_days(write_api, meters) -> None:
    account = make_account()
    with time_machine.travel(NOW, tick=False):
        write_api.post("/meter_events", event(account.account_id, "req-1"))
    later = NOW + timedelta(days=36)
    with time_machine.travel(later, tick=False):
        again = write_api.post("/meter_events", event(account.account_id, "req-1", timestamp=int(later.timestamp())))
    assert again.json()["status"] == "accepted"  # its record expired: a new event


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30) | st.sampled_from(["1e400", "-0", "1E+5", "NaN", "0x10", " 7 ", "api_calls"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["event_name", "customer", "identifier", "value", "timestamp", "extra"]),
       value=json_values)
def test_any_field_of_any_json_is_counted_or_refused_never_a_500(write_api, meters, frozen, field, value) -> None:
    account = make_account()
    body = {**event(account.account_id, "req-fuzz"), field: value}
    response = write_api.post("/meter_events", body)
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert error_of(response)["param"] in (field, "value", "customer", "event_name", "identifier", "timestamp")
    batch = write_api.post("/meter_events", {"events": [body, value]})
    assert batch.status_code == 200 and len(batch.json()["data"]) == 2
