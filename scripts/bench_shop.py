#!/usr/bin/env python
"""The shop's section of ``make bench`` (called from scripts/bench.py); not a test.

On DynamoDB Local, it measures:

1. checkouts/s of ``shop.checkout.checkout`` (two lines, paid by card, gateway latency
   0) with 1 and 8 workers, against the engine's limit: a bare loop of the very same
   TransactWriteItems requests (captured from one real checkout and replayed with fresh
   ids, raw botocore: no reads, no gateway), and the ratio;
2. the access patterns' median latency in a table of 1,000 orders and in one of
   100,000 (the same probe customer, order, invoice and product in both; the rest is
   filler), and the ratio.

Alone: ``BENCH_SCALE=0.05 .venv/bin/python scripts/bench_shop.py`` (it starts its own
engine; the scale shrinks the counts).
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchkit import SCALE  # noqa: E402  (scripts/ is on the path: this file's folder)

CHECKOUTS = max(20, int(1000 * SCALE))
ORDER_SIZES = [max(10, int(n * SCALE)) for n in (1_000, 100_000)]
WORKERS = [1, 8]
PRODUCTS = 20
PROBE_CUSTOMER, PROBE_PRODUCT, PROBE_ORDER, PROBE_INVOICE = "probe", "probe-p", "probe-o", "probe-i"
PROBE_DAY = "2026-03-15"


def use_shop_tables(name: str, endpoint: str) -> None:
    from django.conf import settings

    from billing.models import configure as configure_billing
    from core.dynamo.table import ensure_table
    from shop.models import ShopItem, configure

    settings.DYNAMODB_TABLE, settings.SHOP_DYNAMODB_TABLE = f"{name}_billing", name
    configure_billing(table_name=f"{name}_billing", region="us-east-1", host=endpoint, max_pool_connections=64)
    configure(table_name=name)
    ensure_table()
    ensure_table(model=ShopItem)


def build_catalogue() -> None:
    from shop import access
    from shop.models import Address

    for wid, zip_code in (("w1", "41111"), ("w2", "50111")):
        access.create_warehouse(wid, wid, Address(Country="Sweden", City="X", Street="Y", ZipCode=zip_code))
    for n in range(PRODUCTS):
        access.create_product(f"p{n}", f"Product {n}", 1000 + n, "SEK", "bench")
        for wid in ("w1", "w2"):
            access.put_stock(f"p{n}", wid, 10**8)


def _request(n: int, token: str):
    from core.payments.gateway import CardToken
    from shop.checkout import CheckoutRequest, new_checkout_token

    home = {"Country": "Sweden", "City": "Goteborg", "Street": "S", "ZipCode": "41787"}
    lines = ((f"p{n % PRODUCTS}", 1), (f"p{(n + 7) % PRODUCTS}", 2))
    return CheckoutRequest(token=new_checkout_token(), customer_id=f"c{n % 50}", lines=lines, address=home,
                           card=CardToken(token, "Visa", "4242", 12, 2040))


def checkout_rate(workers: int, token: str) -> dict:
    from shop.checkout import checkout

    requests = [_request(n, token) for n in range(CHECKOUTS)]
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        orders = list(pool.map(checkout, requests))
    elapsed = time.monotonic() - started
    assert all(o.Status == "paid" for o in orders)
    return {"elapsed": elapsed, "rate": CHECKOUTS / elapsed}


def captured_transactions(token: str) -> tuple[list[dict], str, str]:
    """The TransactWriteItems requests of one real checkout, and its order and invoice ids."""
    from core.dynamo.engine import dynamodb_client
    from shop.checkout import checkout

    seen: list[dict] = []

    def grab(params, **kwargs) -> None:
        seen.append(json.loads(json.dumps(params)))

    events = dynamodb_client().meta.events
    events.register("provide-client-params.dynamodb.TransactWriteItems", grab, unique_id="bench-shop-grab")
    try:
        order = checkout(_request(3, token))
    finally:
        events.unregister("provide-client-params.dynamodb.TransactWriteItems", unique_id="bench-shop-grab")
    return seen, order.order_id, order.InvoiceId


def bare_rate(workers: int, token: str) -> dict:
    """The same two transactions per checkout, raw, with fresh order and invoice ids."""
    import secrets

    from core.dynamo.engine import dynamodb_client

    templates, order_id, invoice_id = captured_transactions(token)
    texts = [json.dumps(t) for t in templates]
    client = dynamodb_client()

    def one(_: int) -> None:
        new_order, new_invoice = secrets.token_hex(16), secrets.token_hex(8)
        for text in texts:
            params = json.loads(text.replace(order_id, new_order).replace(invoice_id, new_invoice))
            client.transact_write_items(**params)

    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(CHECKOUTS)))
    elapsed = time.monotonic() - started
    return {"elapsed": elapsed, "rate": CHECKOUTS / elapsed, "transactions_per_checkout": len(texts)}


def seed_orders(count: int) -> float:
    """``count`` orders (order, a line, an invoice each) by 500 filler customers, plus the probe's."""
    from shop.access.checkout_writes import PlannedLine, PlannedOrder, build_order_details
    from shop.models import ShopItem

    def details(order_id: str, invoice_id: str, customer: str, product: str, day: str):
        plan = PlannedOrder(order_id=order_id, invoice_id=invoice_id, customer_id=customer,
                            placed_at=f"{day}T12:00:00Z", currency="SEK",
                            lines=(PlannedLine(product, "Bench", 1000, 1, (("w1", 1),)),), subtotal=1000,
                            discount=0, gift_card_amount=0, card_amount=1000)
        d = build_order_details(plan)
        d.order.Version = 1
        return [d.order, *d.items, d.invoice]

    items = details(PROBE_ORDER, PROBE_INVOICE, PROBE_CUSTOMER, PROBE_PRODUCT, PROBE_DAY)
    for n in range(count - 1):
        day = date.fromordinal(date(2026, 1, 1).toordinal() + n % 365).isoformat()
        items += details(f"o{n}", f"i{n}", f"c{n % 500}", f"p{n % PRODUCTS}", day)

    def write(chunk: list) -> None:
        with ShopItem.batch_write() as batch:
            for item in chunk:
                batch.save(item)

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, [items[i:i + 500] for i in range(0, len(items), 500)]))
    return time.monotonic() - started


def patterns() -> dict[str, Callable[[], object]]:
    from shop import access

    day = date.fromisoformat(PROBE_DAY)
    return {
        "get_order_details_by_order_id": lambda: access.get_order_details_by_order_id(PROBE_ORDER),
        "get_product_by_order_id": lambda: access.get_product_by_order_id(PROBE_ORDER),
        "get_invoice_by_order_id": lambda: access.get_invoice_by_order_id(PROBE_ORDER),
        "get_order_by_product_id_for_date_range":
            lambda: access.get_order_by_product_id_for_date_range(PROBE_PRODUCT, day, day),
        "get_invoice_by_invoice_id": lambda: access.get_invoice_by_invoice_id(PROBE_INVOICE),
        "get_invoice_by_customer_id_for_date_range":
            lambda: access.get_invoice_by_customer_id_for_date_range(PROBE_CUSTOMER, day, day),
        "get_products_by_customer_id_for_date_range":
            lambda: access.get_products_by_customer_id_for_date_range(PROBE_CUSTOMER, day, day),
        "get_orders_by_customer_id": lambda: access.get_orders_by_customer_id(PROBE_CUSTOMER),
        "get_product_by_product_id": lambda: access.get_product_by_product_id("p1"),
        "get_product_inventory_by_warehouse_id": lambda: access.get_product_inventory_by_warehouse_id("w1"),
    }


def pattern_latency(rounds: int = 30) -> dict[str, float]:
    out = {}
    for name, call in patterns().items():
        call()  # warm
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1000)
        out[name] = statistics.median(times)
    return out


def run(endpoint: str, token: str, say: Callable[[str], None] = print) -> dict:
    """Every figure of the shop's section, on the engine at ``endpoint``."""
    results: dict = {"checkouts": CHECKOUTS, "checkout": {}, "bare": {}, "latency": {}}
    use_shop_tables("bench_shop_checkout", endpoint)
    build_catalogue()
    for workers in WORKERS:
        results["bare"][str(workers)] = bare_rate(workers, token)
        results["checkout"][str(workers)] = checkout_rate(workers, token)
        say(f"shop   workers {workers}: checkout {results['checkout'][str(workers)]['rate']:6.1f}/s, "
            f"bare transactions {results['bare'][str(workers)]['rate']:6.1f}/s")
    for size in ORDER_SIZES:
        use_shop_tables(f"bench_shop_{size}", endpoint)
        build_catalogue()
        say(f"shop   seeding {size} orders: {seed_orders(size):.1f}s")
        results["latency"][str(size)] = pattern_latency()
    return results


def render(r: dict) -> str:
    small, large = (str(s) for s in ORDER_SIZES)
    lines = [f"Shop (DynamoDB Local): {r['checkouts']:,} checkouts of two lines, card at gateway latency 0.", "",
             "| workers | checkouts/s | bare TransactWriteItems loop, checkouts/s | checkout / bare |",
             "|---:|---:|---:|---:|"]
    for w in WORKERS:
        c, b = r["checkout"][str(w)]["rate"], r["bare"][str(w)]["rate"]
        lines.append(f"| {w} | {c:.1f} | {b:.1f} | {c / b:.2f} |")
    lines += ["", "(the bare loop replays the checkout's own two transactions with fresh ids: no reads, "
              "no gateway)", "", f"Median latency of the patterns, ms: {int(small):,} orders against "
              f"{int(large):,}", "", f"| pattern | {int(small):,} | {int(large):,} | ratio |", "|---|---:|---:|---:|"]
    for name in r["latency"][small]:
        a, b = r["latency"][small][name], r["latency"][large][name]
        lines.append(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    return "\n".join(lines)


def main() -> None:
    from devtools.benchsetup import bench_engine

    with bench_engine("rpay-bench-shop-") as (endpoint, _):
        from core.payments.demo_cards import demo_card
        from core.payments.gateway import get_gateway

        token = demo_card(get_gateway(), "visa", exp_year=2040).token
        t0 = time.monotonic()
        results = run(endpoint, token, lambda text: print(f"[{time.monotonic() - t0:6.0f}s] {text}",
                                                              flush=True))
    print(render(results))


if __name__ == "__main__":
    threading.current_thread().name = "bench-shop"
    main()
