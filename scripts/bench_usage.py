"""Metered usage in ``make bench`` (scripts/bench.py): usage events per second counted
exactly once (one TransactWriteItems each, billing/access/usage.py), in process, with 1
and 8 threads: through the action (``record_usage``: the checks and the transaction) and
through the API (``POST /api/v1/meter_events``, batches of 100, through the whole Django
stack); one customer's events (the 5,000 events/s case: its day's aggregate spread over the
write shards) and a repeat of them all (duplicates); the DynamoDB requests per event and
per batch of 100. ``BENCH_ONLY=usage`` runs it alone."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from benchkit import SCALE, Requests

EVENTS = max(200, int(2000 * SCALE))
THREADS = [1, 8]
BATCH = 100


def _seed() -> tuple[str, str]:
    from billing import access
    from billing.actions import api_keys
    from billing.actions import meters as meter_actions
    from billing.models import MeterAggregation

    meter_actions.add_meter("bench_calls", "Bench calls", MeterAggregation.SUM, actor="bench")
    account = access.create_account("bench-usage@example.com")
    _, secret = api_keys.create_key("bench-usage", "write", actor="bench")
    return secret, account.account_id


def _events(account_id: str, prefix: str, count: int) -> list[dict]:
    now = int(datetime.now(tz=UTC).timestamp())
    return [{"event_name": "bench_calls", "customer": account_id, "identifier": f"{prefix}-{n}", "value": n % 7 + 1,
             "timestamp": now - n % 600} for n in range(count)]


def _action_rate(events: list[dict], threads: int) -> dict:
    from billing.access import usage as metered
    from billing.actions import meters as meter_actions

    meter = metered.get_meter("bench_calls")
    now = datetime.now(tz=UTC)

    def one(event: dict) -> str:
        return str(meter_actions.record_usage(meter, customer=event["customer"], identifier=event["identifier"],
                                              value=event["value"], timestamp=event["timestamp"], now=now))

    start, cpu = time.monotonic(), time.process_time()
    with ThreadPoolExecutor(threads) as pool:
        outcomes = Counter(pool.map(one, events))
    elapsed = time.monotonic() - start
    return {"rate": len(events) / elapsed, "cpu_ms": (time.process_time() - cpu) * 1000 / len(events),
            "outcomes": dict(outcomes)}


def _api_rate(events: list[dict], secret: str, threads: int) -> dict:
    from django.test import Client

    local = threading.local()
    batches = [events[n:n + BATCH] for n in range(0, len(events), BATCH)]

    def post(batch: list[dict]) -> Counter:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = Client()
        response = client.post("/api/v1/meter_events", json.dumps({"events": batch}), content_type="application/json",
                               SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {secret}")
        assert response.status_code == 200, response.content
        return Counter(a["status"] for a in response.json()["data"])

    start, cpu = time.monotonic(), time.process_time()
    with ThreadPoolExecutor(threads) as pool:
        outcomes = sum(pool.map(post, batches), Counter())
    elapsed = time.monotonic() - start
    return {"rate": len(events) / elapsed, "cpu_ms": (time.process_time() - cpu) * 1000 / len(events),
            "outcomes": dict(outcomes)}


def _requests(secret: str, account_id: str) -> dict:
    from django.test import Client

    client = Client()
    post = lambda body: client.post("/api/v1/meter_events", json.dumps(body),  # noqa: E731
                                    content_type="application/json", SERVER_NAME="localhost",
                                    HTTP_AUTHORIZATION=f"Bearer {secret}")
    post(_events(account_id, "warm", 1)[0])
    counted = {}
    for name, body in (("one event", _events(account_id, "req-one", 1)[0]),
                       ("batch of 100", {"events": _events(account_id, "req-batch", BATCH)})):
        with Requests() as requests:
            post(body)
        counted[name] = dict(requests.ops)
    return counted


def run(say: Callable[[str], None] = print) -> dict:
    from django.conf import settings

    from billing.access import usage as metered

    settings.API_RATE_LIMIT = 10**9  # the figure is the events', not the key's limit
    secret, account_id = _seed()
    results: dict = {"events": EVENTS, "shards": metered.USAGE_SHARDS, "action": {}, "api": {},
                     "requests": _requests(secret, account_id)}
    for threads in THREADS:
        events = _events(account_id, f"action-{threads}", EVENTS)
        r = _action_rate(events, threads)
        results["action"][str(threads)] = r
        say(f"usage  action threads {threads}: {r['rate']:6.1f} events/s ({r['cpu_ms']:.2f} ms CPU per event)")
        again = _action_rate(events, threads)
        results["action"][f"{threads} again"] = again
        say(f"usage  action threads {threads}, all duplicates: {again['rate']:6.1f} events/s")
        r = _api_rate(_events(account_id, f"api-{threads}", EVENTS), secret, threads)
        results["api"][str(threads)] = r
        say(f"usage  API batches of {BATCH}, threads {threads}: {r['rate']:6.1f} events/s")
    return results


def render(r: dict) -> str:
    lines = [f"Metered usage events, counted exactly once (in process, {r['events']} events of one customer per row, "
             f"its day's aggregate over {r['shards']} write shards; one TransactWriteItems per event)", "",
             "| path | threads | events/s | Python CPU per event (ms) | outcomes |", "|---|---:|---:|---:|---|"]
    for path, key in (("action (record_usage)", "action"), (f"API, batches of {BATCH}", "api")):
        for name, x in r[key].items():
            outcomes = ", ".join(f"{k} {v}" for k, v in sorted(x["outcomes"].items()))
            lines.append(f"| {path} | {name} | {x['rate']:.0f} | {x['cpu_ms']:.2f} | {outcomes} |")
    lines += ["", "DynamoDB requests per call of `POST /api/v1/meter_events`:", ""]
    for name, ops in r["requests"].items():
        lines.append(f"* {name}: " + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())))
    return "\n".join(lines)
