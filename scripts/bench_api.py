"""The REST API's list endpoint in ``make bench`` (scripts/bench.py): calls per second of
``GET /api/v1/products?limit=20`` and ``GET /api/v1/customers/<id>/receipts?limit=20``
through the whole Django stack (middleware, key look-up, rate counter, one Query, JSON),
in process (Django's test client: no HTTP server in the figure), with 1 and 8 threads;
and the DynamoDB requests per call. ``BENCH_ONLY=api`` runs it alone."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

CALLS = 400
THREADS = [1, 8]
RECEIPTS = 60
PRODUCTS = 40


def _seed() -> tuple[str, str]:
    """Products, a customer with receipts, and a read key: (the key, the customer's id)."""
    from billing import access
    from billing.actions import api_keys
    from billing.models import Receipt

    for n in range(PRODUCTS):
        access.create_product(f"BENCH-{n:03d}", f"Bench product {n}", 100 + n, "USD")
    account = access.create_account("bench-api@example.com")
    items = []  # receipts need no subscription item to be listed
    for n in range(RECEIPTS):
        billed = (date(2026, 1, 1) + timedelta(days=n)).isoformat()
        items.append(Receipt(Receipt.pk(account_id=account.account_id),
                             Receipt.sk(billing_date=billed, sku="BENCH-000", sub_id="b0a1c2d3e4f50617"),
                             sub_id="b0a1c2d3e4f50617", SKU="BENCH-000", BillingDate=billed,
                             ProcessedDate=f"{billed}T06:00:00+00:00", ProcessedAmount=100, Currency="USD"))
    access.batch_items(items)
    _, secret = api_keys.create_key("bench", "read", actor="bench")
    return secret, account.account_id


def _rate(path: str, secret: str, threads: int) -> dict:
    from django.test import Client

    per_thread = CALLS // threads
    local = threading.local()

    def call(_: int) -> int:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = Client()
        return client.get(path, SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code

    start, cpu = time.monotonic(), time.process_time()
    with ThreadPoolExecutor(threads) as pool:
        statuses = Counter(pool.map(call, range(per_thread * threads)))
    elapsed = time.monotonic() - start
    calls = per_thread * threads
    assert statuses == {200: calls}, statuses
    return {"rate": calls / elapsed, "cpu_ms": (time.process_time() - cpu) * 1000 / calls, "calls": calls}


def _requests_per_call(path: str, secret: str) -> dict:
    from django.test import Client

    from core.dynamo.engine import dynamodb_client

    counter: Counter = Counter()
    client = Client()
    client.get(path, SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {secret}")  # warm
    events = dynamodb_client().meta.events
    handler = lambda model, **kwargs: counter.update([model.name])  # noqa: E731
    events.register("before-call.dynamodb", handler, unique_id="bench-api")
    try:
        client.get(path, SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {secret}")
    finally:
        events.unregister("before-call.dynamodb", unique_id="bench-api")
    return dict(counter)


def run(say: Callable[[str], None] = print) -> dict:
    from django.conf import settings

    settings.API_RATE_LIMIT = 10**9  # the figure is the API's, not the limit's
    secret, customer = _seed()
    paths = {"products": "/api/v1/products?limit=20", "receipts": f"/api/v1/customers/{customer}/receipts?limit=20"}
    results: dict = {"calls": CALLS, "lists": {}}
    for name, path in paths.items():
        results["lists"][name] = {"requests": _requests_per_call(path, secret)}
        for threads in THREADS:
            r = _rate(path, secret, threads)
            results["lists"][name][str(threads)] = r
            say(f"api    {name} threads {threads}: {r['rate']:6.1f} calls/s ({r['cpu_ms']:.2f} ms CPU per call)")
    return results


def render(r: dict) -> str:
    lines = [f"REST API list endpoints (page of 20, in process through the whole Django stack, {r['calls']} calls "
             "each; a read key, its look-up and rate counter included)", "",
             "| list | threads | calls/s | Python CPU per call (ms) | DynamoDB requests per call |",
             "|---|---:|---:|---:|---|"]
    for name, figures in r["lists"].items():
        requests = ", ".join(f"{op} {n}" for op, n in sorted(figures["requests"].items()))
        for threads in THREADS:
            x = figures[str(threads)]
            lines.append(f"| {name} | {threads} | {x['rate']:.0f} | {x['cpu_ms']:.2f} | {requests} |")
    return "\n".join(lines)
