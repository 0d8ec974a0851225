"""Usage events exactly once (M8) on DynamoDB Local, with real threads: eight senders send
the same 500 events at once, each in its own order, and every aggregation comes out exact;
a sender that dies part-way and is started again (the same identifiers) never counts twice.
Also what one event costs in requests."""

from __future__ import annotations

import random
import threading
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing.access import usage as metered
from billing.actions import meters as meter_actions
from billing.models import MeterAggregation
from billing.rules.usage import expected
from tests.builders import make_account

NOW = datetime(2027, 3, 10, 12, 0, 0, tzinfo=UTC)
PERIOD = (date(2027, 3, 1), date(2027, 4, 1))
METERS = {"calls": MeterAggregation.COUNT, "tokens": MeterAggregation.SUM, "seats": MeterAggregation.MAX,
          "users": MeterAggregation.UNIQUE_COUNT, "disk": MeterAggregation.LAST}


def events(account_id: str, count: int = 500) -> list[dict]:
    """``count`` distinct events over the five meters and three days; a few share a second
    (the last's tie-break) and values repeat (unique_count, max)."""
    rng = random.Random(7)
    made = []
    for n in range(count):
        name = list(METERS)[n % len(METERS)]
        value: Decimal | str = Decimal(rng.randint(0, 40)) / 4
        if METERS[name] == MeterAggregation.UNIQUE_COUNT:
            value = f"user-{rng.randint(1, 30)}"
        made.append({"name": name, "customer": account_id, "identifier": f"evt-{n:04d}", "value": value,
                     "timestamp": int((NOW - timedelta(days=n % 3, seconds=rng.randint(0, 5))).timestamp())})
    return made


def send(sent: list[dict], meters: dict, outcomes: list[str]) -> None:
    for event in sent:
        outcomes.append(str(meter_actions.record_usage(
            meters[event["name"]], customer=event["customer"], identifier=event["identifier"], value=event["value"],
            timestamp=event["timestamp"], now=NOW)))


def at_once(senders: list[list[dict]], meters: dict) -> list[str]:
    outcomes: list[str] = []
    barrier = threading.Barrier(len(senders))
    failures: list[BaseException] = []

    def run(sent: list[dict]) -> None:
        barrier.wait()
        try:
            send(sent, meters, outcomes)
        except BaseException as error:  # a thread's failure must fail the test
            failures.append(error)

    threads = [threading.Thread(target=run, args=(sent,)) for sent in senders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    return outcomes


def assert_exact(account_id: str, sent: list[dict]) -> None:
    for name, aggregation in METERS.items():
        mine = [(e["value"], e["timestamp"], e["identifier"]) for e in sent if e["name"] == name]
        assert metered.usage_for_period(account_id, name, *PERIOD) == expected(aggregation, mine), name
        aggregates = metered.day_aggregates(account_id, name, *PERIOD)
        assert sum(int(a.Events) for a in aggregates) == len(mine), name  # each counted once


@pytest.fixture
def meters(local_table) -> dict:
    return {name: meter_actions.add_meter(name, name.title(), aggregation, actor="test")
            for name, aggregation in METERS.items()}


def test_eight_senders_of_the_same_500_events_count_each_once(meters) -> None:
    account = make_account()
    sent = events(account.account_id)
    senders = [random.Random(seed).sample(sent, len(sent)) for seed in range(8)]
    with time_machine.travel(NOW, tick=False):
        outcomes = at_once(senders, meters)
    assert outcomes.count("accepted") == 500 and outcomes.count("duplicate") == 7 * 500
    assert_exact(account.account_id, sent)


def test_a_sender_killed_between_attempts_never_counts_twice(meters) -> None:
    account = make_account()
    sent = events(account.account_id, 200)
    with time_machine.travel(NOW, tick=False):
        # The first attempt dies after 120 events (their answers lost); two restarts of the
        # sender resend everything, one of them beside a third sender.
        send(sent[:120], meters, [])
        outcomes = at_once([sent, list(reversed(sent))], meters)
        send(sent, meters, outcomes)
    assert outcomes.count("accepted") == 80 and outcomes.count("duplicate") == 2 * 200 - 80 + 200
    assert_exact(account.account_id, sent)


def test_requests_per_event(meters, ddb_requests) -> None:
    account = make_account()
    with time_machine.travel(NOW, tick=False):
        ddb_requests.reset()
        send([{"name": "tokens", "customer": account.account_id, "identifier": "a", "value": 5,
               "timestamp": int(NOW.timestamp())}], meters, [])
        assert ddb_requests.by_name() == {"TransactWriteItems": 1}  # count and sum: one transaction
        # Two events of one day's shard (the max is kept per shard): the second below the first.
        same_shard = next(f"c{n}" for n in range(1000) if metered.shard_of(f"c{n}") == metered.shard_of("b"))
        ddb_requests.reset()
        send([{"name": "seats", "customer": account.account_id, "identifier": x, "value": v,
               "timestamp": int(NOW.timestamp())} for x, v in (("b", 5), (same_shard, 2))], meters, [])
        # a max below the max: the conditional SET cancels the first, the second counts it
        assert ddb_requests.by_name() == {"TransactWriteItems": 3}
        ddb_requests.reset()
        assert metered.usage_for_period(account.account_id, "seats", *PERIOD) == 5
        assert ddb_requests.by_name() == {"GetItem": 1, "Query": 1}


def test_each_refusal_is_read_from_its_own_cancellation_reason(meters) -> None:
    """On the real engine: the transaction's reasons are read by place (account, watermark,
    record, aggregate), a duplicate wins over every other reason, and one customer's
    identifier is not another's."""
    from billing.access import mark_account_closed
    from billing.rules.usage import EventRefused

    account, other = make_account(), make_account("other@example.com")
    today = int(NOW.timestamp())
    one = {"name": "seats", "customer": account.account_id, "identifier": "same", "value": 5, "timestamp": today}
    with time_machine.travel(NOW, tick=False):
        outcomes: list[str] = []
        send([one, {**one, "customer": other.account_id}], meters, outcomes)
        assert outcomes == ["accepted", "accepted"]  # an identifier is the customer's own
        metered.mark_billed(account.account_id, "seats", NOW.date())
        send([one], meters, outcomes)  # its day is billed now, but it was counted: a duplicate
        assert outcomes[-1] == "duplicate"
        with pytest.raises(EventRefused) as billed:
            send([{**one, "identifier": "late", "value": 9}], meters, [])
        assert (billed.value.reason, billed.value.param) == ("period_billed", "timestamp")
        mark_account_closed(other.account_id, NOW.isoformat())
        with pytest.raises(EventRefused) as closed:
            send([{**one, "customer": other.account_id, "identifier": "new"}], meters, [])
        assert (closed.value.reason, closed.value.param) == ("unknown_customer", "customer")
        with pytest.raises(EventRefused) as unknown:
            send([{**one, "customer": "0000000000000000", "identifier": "new"}], meters, [])
        assert unknown.value.reason == "unknown_customer"
    assert metered.usage_for_period(account.account_id, "seats", *PERIOD) == 5
    assert metered.billed_through(account.account_id, "seats") == NOW.date().isoformat()
