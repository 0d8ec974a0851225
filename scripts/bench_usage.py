"""Metered usage in ``make bench`` (scripts/bench.py): usage events per second counted
exactly once (one TransactWriteItems each, billing/access/usage.py), in process, with 1
and 8 threads: through the action (``record_usage``: the checks and the transaction) and
through the API (``POST /api/v1/meter_events``, batches of 100, through the whole Django
stack); one customer's events (the 5,000 events/s case: its day's aggregate spread over the
write shards) and a repeat of them all (duplicates); the DynamoDB requests per event and
per batch of 100; and the payment run over subscriptions with a metered price beside the
same run over fixed-price ones (payments/s and requests per payment: the usage a payment
bills closes its period, 16 watermark updates, and reads it, one Query).
``BENCH_ONLY=usage`` runs it alone."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from benchkit import SCALE, Requests, batch_run

PAYMENTS = max(200, int(2000 * SCALE))
PAYMENT_WORKERS = 8

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


def _metered_price() -> str:
    from billing import access
    from billing.actions import prices as price_actions
    from billing.rules.pricing import PriceTerms

    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    price = price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal("0.2")), actor="bench",
                                    nickname="bench calls", meter="bench_calls")
    return price.PriceId


def _usage_of(price_id: str) -> Callable[[object, date], list]:
    """Gives each due subscription the metered price and a month's usage as the events
    leave it (one day's aggregate, 37 calls): what its payment bills in arrears."""
    from billing.models import UsageAggregate

    def dress(sub, day: date) -> list:
        sub.MeteredPriceId = price_id
        used = (day - timedelta(days=10)).isoformat()
        return [UsageAggregate(UsageAggregate.pk(account_id=sub.account_id, event_name="bench_calls"),
                               UsageAggregate.sk(day=used, shard="00"), Events=37, Sum=Decimal(37))]

    return dress


def _payments(tmp: Path, say: Callable[[str], None]) -> dict:
    """The payment run over ``PAYMENTS`` fixed-price subscriptions, then as many with the
    metered price, on the simulated gateway (no latency), ``PAYMENT_WORKERS`` workers."""
    from core.payments.demo_cards import demo_card
    from core.payments.simulated import SimulatedGateway

    ledger = str(tmp / "usage-ledger.sqlite3")
    token = demo_card(SimulatedGateway(ledger_path=ledger), "visa", exp_year=2030).token
    dress = _usage_of(_metered_price())
    out = {}
    for name, kwargs in (("fixed", {}), ("metered", {"prefix": "m", "dress": dress})):
        r = batch_run(token, PAYMENT_WORKERS, 0, ledger, PAYMENTS, **kwargs)
        r["requests_per_payment"] = sum(r["requests"].values()) / r["paid"]
        out[name] = r
        say(f"usage  payments, {name}: {r['rate']:6.1f} payments/s, {r['requests_per_payment']:.1f} requests each")
    return out


def run(say: Callable[[str], None] = print, tmp: Path | None = None) -> dict:
    import tempfile

    from django.conf import settings

    from billing.access import usage as metered

    settings.API_RATE_LIMIT = 10**9  # the figure is the events', not the key's limit
    secret, account_id = _seed()
    results: dict = {"events": EVENTS, "shards": metered.USAGE_SHARDS, "action": {}, "api": {},
                     "requests": _requests(secret, account_id)}
    with tempfile.TemporaryDirectory() as own:
        results["payments"] = _payments(tmp or Path(own), say)
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
    if "payments" in r:
        lines += ["", f"The payment run with a metered price beside fixed prices ({PAYMENTS} due payments, "
                  f"{PAYMENT_WORKERS} workers, simulated gateway without latency):", "",
                  "| subscriptions | payments/s | requests per payment | requests per payment, by kind |",
                  "|---|---:|---:|---|"]
        for name, x in r["payments"].items():
            kinds = ", ".join(f"{op} {n / x['paid']:g}" for op, n in sorted(x["requests"].items()))
            lines.append(f"| {name} | {x['rate']:.0f} | {x['requests_per_payment']:.1f} | {kinds} |")
    return "\n".join(lines)
