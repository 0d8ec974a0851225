#!/usr/bin/env python
"""Benchmark of the payment batch on DynamoDB Local (``make bench``); not a test.

Starts its own DynamoDB Local on a free port, in memory, seeds tables with
BatchWriteItem, and measures:

1. payments/s of ``batches.run_payments`` over 2,000 due payments in a table of 20,000
   subscriptions, with 1, 8 and 32 workers and gateway latency 0 and 100 ms;
2. the engine's own limit: a bare loop of the same conditional PutItem + UpdateItem
   pairs (raw botocore, no query, gateway or mail) with the same workers, and the
   ratio batch / limit;
3. the same 2,000 due payments in tables of 2,000, 20,000 and 100,000 subscriptions;
4. a naive baseline that finds the due subscriptions with a Scan (only here!);
5. DynamoDB requests per payment;
6. the shop: checkouts/s against a bare loop of the same transactions, and the access
   patterns' latency at 1,000 and 100,000 orders (scripts/bench_shop.py).
7. sharded due keys: the Query time of one day of 20,000 due items in a table
   of 200,000, with 1 and 16 shards; and payments/s of ``process_payments --processes P``
   with 1 and 2 processes (each a child process on its share of the shards);
8. payments/s at 300 ms per charge with 32 and 64 workers, against the ideal
   min(workers / latency, 1 / CPU per payment);
9. the payment run's reconciliation: time and requests per charge it reads;
10. the Stripe gateway on localstripe beside the simulated gateway: payments/s and Python
   CPU per payment at 8 and 32 workers (the library's request building and parsing), the
   median of a few rounds (scripts/bench_stripe.py); the ratio of the two is printed last;
11. the REST API's list endpoints: calls/s through the whole Django stack, and DynamoDB
   requests per call (scripts/bench_api.py);
12. outbound webhooks: deliveries/s of the sender to a receiver on the loopback, for one
   endpoint and for four at once (scripts/bench_webhooks.py);
13. metered usage: events/s counted exactly once, through the action and the API's batches,
   and the requests per event and per batch of 100 (scripts/bench_usage.py);
14. revenue analytics over 100,000 accounts: ``revenue_rebuild`` of the whole history and of
   one day, its ``--check``, and the staff Revenue page read from the kept items
   (scripts/bench_revenue.py);

Prints the figures and writes docs/PERFORMANCE.md and bench-results.json (git-ignored).
``BENCH_SCALE=0.1`` shrinks every count for a quick try; ``BENCH_ONLY=stripe`` runs
section 10 alone and only prints it (``BENCH_STRIPE_ROUNDS``: its rounds, 3);
``BENCH_ONLY=api`` section 11 alone, ``BENCH_ONLY=webhooks`` section 12 alone,
``BENCH_ONLY=usage`` section 13 alone, ``BENCH_ONLY=revenue`` section 14 alone.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_api  # noqa: E402  (scripts/ is on the path: this file's folder)
import bench_revenue  # noqa: E402
import bench_shop  # noqa: E402
import bench_stripe  # noqa: E402
import bench_usage  # noqa: E402
import bench_webhooks  # noqa: E402
from benchkit import (  # noqa: E402
    PREFIX_DUE,
    SCALE,
    Requests,
    bare_loop,
    bare_tx_loop,
    batch_run,
    next_day,
    seed,
    seed_day,
    seed_due,
    subscription,
    timed_pairs,
    use_table,
)

from devtools.benchsetup import bench_engine  # noqa: E402

DUE = int(2000 * SCALE)
SIZES = [int(n * SCALE) for n in (2_000, 20_000, 100_000)]
WORKERS = [1, 8, 32]
LATENCIES = [0, 100]
# A typical card processor's time per charge, and the workers of one process against it
# The ideal is min(workers / latency, the process's CPU limit).
SLOW_GATEWAY_MS = 300
SLOW_GATEWAY_WORKERS = [32, 64]
PREFIX_FILLER = "f"


def seed_filler(count: int, token: str) -> float:
    # Never due on a benchmark date: spread over January 2030.
    return seed([subscription(n, PREFIX_FILLER, date(2030, 1, 1 + n % 28), token) for n in range(count)])


def access_loop(token: str, workers: int) -> dict:
    """The same pairs through the access layer (PynamoDB): ``access.create_receipt`` and
    ``access.advance_after_payment``, with no query, gateway or mail; receipt numbers from
    one run's series, as a run draws them (taken by the receipt's transaction: two requests
    a pair, as in bare_tx_loop)."""
    from billing import access

    day = next_day()
    seed_due(day, token, DUE)
    subs = [subscription(n, PREFIX_DUE, day, token) for n in range(DUE)]
    nxt = day + timedelta(days=31)
    numbers = access.ReceiptNumbers()

    def pair(n: int) -> None:
        sub = subs[n]
        access.create_receipt(sub, billing_date=day, amount=999, currency="USD", charge_id="ch_bench",
                              retention_days=200, numbers=numbers)
        access.advance_after_payment(sub, slot=day, paid_period=day, next_payment=nxt,
                                     next_reminder=nxt - timedelta(days=7))

    return timed_pairs(pair, workers, DUE)


def scan_run(token: str, workers: int, ledger: str) -> dict:
    """The naive way: Scan the whole table for due subscriptions, then the same take_payment."""
    from django.core import mail

    from billing.models import Subscription
    from billing.operations.payments import take_payment
    from core.payments.simulated import SimulatedGateway

    day = next_day()
    seed_due(day, token, DUE)
    from billing import access

    gateway = SimulatedGateway(ledger_path=ledger, latency_ms=0)
    mail.outbox = []
    found = time.monotonic()
    by_query = len(list(access.get_due_payments_by_date(day)))
    query_seconds = time.monotonic() - found
    started = time.monotonic()
    with Requests() as requests:
        due = list(Subscription.scan(Subscription.NextPaymentDate == day.isoformat()))
        scan_seconds = time.monotonic() - started
        assert len(due) == by_query == DUE
        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(lambda s: take_payment(s, run_date=day, gateway=gateway), due))
    elapsed = time.monotonic() - started
    assert sum(o.status == "paid" for o in outcomes) == DUE
    return {"elapsed": elapsed, "rate": DUE / elapsed, "requests": dict(requests.ops),
            "find_by_scan_s": scan_seconds, "find_by_query_s": query_seconds}


# --- 7. sharded due keys and processes ---------------------------------------
SHARD_DAY_DUE = int(20_000 * SCALE)
SHARD_TABLE = int(200_000 * SCALE)
SHARD_COUNTS = [1, 16]
PROCESS_COUNTS = [1, 2]


def use_sharded_table(name: str, endpoint: str, shards: int) -> None:
    from django.conf import settings

    from billing.models import configure
    from core.dynamo.table import ensure_table

    settings.DYNAMODB_TABLE, settings.DUE_SHARDS = name, shards
    configure(table_name=name, region="us-east-1", host=endpoint, max_pool_connections=64)
    ensure_table(due_shards=shards)


def shard_section(endpoint: str, token: str, ledger: str, say) -> dict:
    """Query time of a day, unsharded and sharded; then payments/s with 1 and 2 processes."""
    from billing import access

    out: dict = {"query": {}, "processes": {}}
    day = date(2025, 6, 1)  # a batch refuses a --date after today
    for shards in SHARD_COUNTS:
        use_sharded_table(f"bench_shards_{shards}", endpoint, shards)
        seed([subscription(n, PREFIX_FILLER, date(2025, 7, 1 + n % 28), token)
              for n in range(SHARD_TABLE - SHARD_DAY_DUE)])
        seed([subscription(n, PREFIX_DUE, day, token) for n in range(SHARD_DAY_DUE)])
        times = []
        for _ in range(3):
            started = time.monotonic()
            found = sum(1 for _ in access.get_due_payments_by_date(day))
            times.append(time.monotonic() - started)
            assert found == SHARD_DAY_DUE, found
        out["query"][str(shards)] = {"seconds": min(times), "items": found}
        say(f"query  {SHARD_DAY_DUE} due of {SHARD_TABLE}, {shards:2d} shard(s): {min(times):.2f} s")
    # processes: the 16-shard table, a fresh day each
    import subprocess

    from billing.management.batchprocesses import child_environment

    env = {**child_environment(), "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend"}
    for n, processes in enumerate(PROCESS_COUNTS):
        run_day = date(2025, 8, 1 + n)
        seed([subscription(i, f"p{n}", run_day, token) for i in range(DUE)])
        started = time.monotonic()
        proc = subprocess.run([sys.executable, str(ROOT / "manage.py"), "process_payments", "--processes",
                               str(processes), "--date", run_day.isoformat(), "--catch-up-days", "0",
                               "--workers", "32", "--json"], env=env, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - started
        summary = json.loads(proc.stdout.splitlines()[-1])
        assert summary["paid"] == DUE, (summary, proc.stderr[-500:])
        out["processes"][str(processes)] = {"rate": DUE / wall, "wall": wall}
        say(f"processes {processes}: {DUE / wall:7.1f} payments/s ({DUE} in {wall:.1f} s, start-up included)")
    return out


def render_shards(r: dict) -> str:
    q, procs = r["query"], r["processes"]
    lines = [f"(7) sharded due keys: one day of {SHARD_DAY_DUE:,} due payments in a table of "
             f"{SHARD_TABLE:,}; Query time of the whole day (best of 3), and payments/s of process_payments "
             f"--processes P --workers 32 over {DUE:,} due payments (wall time, process start-up included)", "",
             "| shards | Query time of the day (s) |", "|---:|---:|"]
    lines += [f"| {shards} | {v['seconds']:.2f} |" for shards, v in q.items()]
    lines += ["", "| processes | payments/s |", "|---:|---:|"]
    lines += [f"| {p} | {v['rate']:.0f} |" for p, v in procs.items()]
    one = procs[str(PROCESS_COUNTS[0])]["rate"]
    lines += ["", f"This machine has {os.cpu_count()} cores shared with DynamoDB Local: a host with C free cores "
              f"runs about C processes at ~{one:.0f}/s each (one core's worth of Python per process), "
              "until the table's and the gateway's limits (scripts/capacity.py)."]
    return "\n".join(lines)


def main() -> None:
    if os.environ.get("BENCH_ONLY") == "stripe":
        stripe_only()
        return
    if os.environ.get("BENCH_ONLY") == "api":
        api_only()
        return
    if os.environ.get("BENCH_ONLY") == "webhooks":
        bench_webhooks.main()
        return
    if os.environ.get("BENCH_ONLY") == "usage":
        section_only("bench_usage", lambda tmp, say: bench_usage.run(say, tmp), bench_usage.render)
        return
    if os.environ.get("BENCH_ONLY") == "revenue":
        section_only("bench_revenue", lambda tmp, say: bench_revenue.run(say, tmp), bench_revenue.render)
        return
    t0 = time.monotonic()
    results: dict = {"due": DUE, "scale": SCALE, "python": platform.python_version(),
                     "cpus": os.cpu_count(), "engine": "DynamoDB Local 3.3.0 in memory"}
    with bench_engine() as (endpoint, tmp):
        from core.payments.demo_cards import demo_card
        from core.payments.simulated import SimulatedGateway

        ledger = str(tmp / "ledger.sqlite3")
        token = demo_card(SimulatedGateway(ledger_path=ledger), "visa", exp_year=2030).token

        def say(text: str) -> None:
            print(f"[{time.monotonic() - t0:6.0f}s] {text}", flush=True)

        # 1 and 2: the 20,000 table.
        mid = SIZES[1]
        use_table(f"bench_{mid}", endpoint)
        say(f"seeding {mid} subscriptions: {seed_filler(mid - DUE, token):.1f}s")
        results["batch"], results["limit"], results["access_limit"], results["limit_tx"] = {}, {}, {}, {}
        # The limit and the batch alternate, so that the table's growth (receipts) and
        # the machine's load weigh on both alike.
        for workers in WORKERS:
            r = bare_loop(token, workers, DUE)
            results["limit"][str(workers)] = r
            say(f"limit  workers {workers:2d}: {r['rate']:7.1f} pairs/s")
            r = bare_tx_loop(token, workers, DUE)
            results["limit_tx"][str(workers)] = r
            say(f"tx     workers {workers:2d}: {r['rate']:7.1f} pairs/s (receipt as today's transaction)")
            r = access_loop(token, workers)
            results["access_limit"][str(workers)] = r
            say(f"access workers {workers:2d}: {r['rate']:7.1f} pairs/s")
            r = batch_run(token, workers, 0, ledger, DUE)
            results["batch"][f"{workers}/0"] = r
            say(f"batch  workers {workers:2d} latency   0 ms: {r['rate']:7.1f} payments/s")
        for latency in LATENCIES[1:]:
            for workers in WORKERS:
                r = batch_run(token, workers, latency, ledger, DUE)
                results["batch"][f"{workers}/{latency}"] = r
                say(f"batch  workers {workers:2d} latency {latency:3d} ms: {r['rate']:7.1f} payments/s")
        # 7: a card processor's latency; the CPU limit is 1 / (CPU per payment at latency 0).
        cpu_ms = results["batch"][f"{WORKERS[-1]}/0"]["cpu_ms"]
        results["slow_gateway"] = {"latency_ms": SLOW_GATEWAY_MS, "cpu_limit": 1000 / cpu_ms,
                                   "load_before": os.getloadavg()[0]}
        for workers in SLOW_GATEWAY_WORKERS:
            r = batch_run(token, workers, SLOW_GATEWAY_MS, ledger, DUE)
            r["ideal"] = min(workers / (SLOW_GATEWAY_MS / 1000), results["slow_gateway"]["cpu_limit"])
            results["slow_gateway"][str(workers)] = r
            say(f"batch  workers {workers:2d} latency {SLOW_GATEWAY_MS} ms: {r['rate']:7.1f} payments/s "
                f"(ideal {r['ideal']:.0f}/s: {r['rate'] / r['ideal']:.2f})")
        results["slow_gateway"]["load_after"] = os.getloadavg()[0]
        results["scan"] = {str(mid): scan_run(token, 8, ledger)}
        say(f"scan   table {mid}: {results['scan'][str(mid)]['rate']:7.1f} payments/s")
        # 9: the reconciliation's cost, on this table (every charge so far is its).
        results["reconcile"] = reconcile_cost()
        say(f"reconcile {results['reconcile']['charges']} charges: "
            f"{results['reconcile']['ms_per_charge']:.2f} ms per charge")

        # 10: the Stripe gateway on localstripe beside the simulated one.
        results["stripe"] = bench_stripe.run(tmp, say, seed_day=seed_day, next_day=next_day)

        # 3 (and 4 again): tables of other sizes, 8 workers, latency 0.
        results["sizes"] = {str(mid): results["batch"]["8/0"]}
        for size in (SIZES[0], SIZES[2]):
            use_table(f"bench_{size}", endpoint)
            if size > DUE:
                say(f"seeding {size} subscriptions: {seed_filler(size - DUE, token):.1f}s")
            r = batch_run(token, 8, 0, ledger, DUE)
            results["sizes"][str(size)] = r
            say(f"batch  table {size}: {r['rate']:7.1f} payments/s")
            if size == SIZES[2]:
                results["scan"][str(size)] = scan_run(token, 8, ledger)
                say(f"scan   table {size}: {results['scan'][str(size)]['rate']:7.1f} payments/s")

        # 7: sharded due keys, 1 and 2 processes.
        results["shards"] = shard_section(endpoint, token, ledger, say)

        # 6: the shop's checkout and patterns (scripts/bench_shop.py).
        results["shop"] = bench_shop.run(endpoint, token, say)

        # 11: the REST API's list endpoints (scripts/bench_api.py), on a table of their own.
        use_table("bench_api", endpoint)
        results["api"] = bench_api.run(say)
        # 12: outbound webhooks (scripts/bench_webhooks.py).
        results["webhooks"] = bench_webhooks.run(endpoint, say)
        # 13: metered usage events (scripts/bench_usage.py), on a table of their own.
        use_table("bench_usage", endpoint)
        results["usage"] = bench_usage.run(say, tmp)
        # 14: revenue analytics over 100,000 accounts (scripts/bench_revenue.py), on a table of its own.
        use_table("bench_revenue", endpoint)
        results["revenue"] = bench_revenue.run(say, tmp)
    results["total_seconds"] = time.monotonic() - t0
    (ROOT / "bench-results.json").write_text(json.dumps(results, indent=2, default=str))
    report = (render(results) + "\n\n" + render_shards(results["shards"]) + "\n\n"
              + bench_stripe.render(results["stripe"]) + "\n\n" + bench_shop.render(results["shop"])
              + "\n\n" + bench_api.render(results["api"]) + "\n\n" + bench_webhooks.render(results["webhooks"])
              + "\n\n" + bench_usage.render(results["usage"]) + "\n\n" + bench_revenue.render(results["revenue"]))
    print(report)
    write_performance_md(report)
    # Last, so that it is the line a reader of the terminal sees.
    print("\n" + bench_stripe.ratio_line(results["stripe"]))


def section_only(table: str, run: Callable[[Path, Callable[[str], None]], dict], render: Callable[[dict], str]) -> None:
    """``BENCH_ONLY=<section>``: one section alone, on a table of its own (DynamoDB Local
    in memory); printed, not written into docs/PERFORMANCE.md."""
    t0 = time.monotonic()
    with bench_engine() as (endpoint, tmp):
        use_table(table, endpoint)
        result = run(tmp, lambda text: print(f"[{time.monotonic() - t0:6.0f}s] {text}", flush=True))
    print(render(result))


def stripe_only() -> None:
    """``BENCH_ONLY=stripe``: section 10 alone, on a small table."""
    section_only("bench_stripe", lambda tmp, say: bench_stripe.run(tmp, say, seed_day=seed_day, next_day=next_day),
                 bench_stripe.render)


def api_only() -> None:
    """``BENCH_ONLY=api``: section 11 alone."""
    section_only("bench_api", lambda tmp, say: bench_api.run(say), bench_api.render)


def reconcile_cost() -> dict:
    """The payment run's reconciliation (billing/batches/reconcile.py) over the charges the
    benchmark made today, one in 8 of them by subscription id: requests and time per charge
    whose receipt is read (what each of the RECONCILE_DAYS runs after a charge's day pays)."""
    from billing.batches.reconcile import reconcile

    today = date.today()
    one_in_8 = lambda sub_id: zlib.crc32(sub_id.encode()) % 8 == 0  # noqa: E731
    cpu, wall = time.process_time(), time.monotonic()
    with Requests() as requests:
        checked, differences = reconcile(today - timedelta(days=1), today + timedelta(days=1), fix=False,
                                         reverse=False, takes=one_in_8)
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    return {"charges": checked, "differences": len(differences), "requests": dict(requests.ops),
            "ms_per_charge": wall / max(checked, 1) * 1000, "cpu_ms_per_charge": cpu / max(checked, 1) * 1000}


def render(r: dict) -> str:
    due = r["due"]
    lines = [f"Payment run over {due:,} due payments ({r['engine']}, {r['cpus']} CPUs shared, Python {r['python']}).", ""]
    lines += [f"(1) payments/s, table of {SIZES[1]:,} subscriptions", "",
              "| workers | latency 0 ms | latency 100 ms |", "|---:|---:|---:|"]
    for w in WORKERS:
        lines.append(f"| {w} | {r['batch'][f'{w}/0']['rate']:.0f} | {r['batch'][f'{w}/100']['rate']:.0f} |")
    lines += ["", "(2) the engine's limit: bare loops of the same conditional PutItem + UpdateItem pairs,",
              "raw botocore and through the access layer (PynamoDB); batch at latency 0 / each", "",
              "| workers | raw pairs/s | batch / raw | access-layer pairs/s | batch / access layer |",
              "|---:|---:|---:|---:|---:|"]
    for w in WORKERS:
        limit = r["limit"][str(w)]["rate"]
        acc = r["access_limit"][str(w)]["rate"]
        batch = r["batch"][f"{w}/0"]["rate"]
        lines.append(f"| {w} | {limit:.0f} | {batch / limit:.2f} | {acc:.0f} | {batch / acc:.2f} |")
    lines += ["", "Python CPU per payment or pair (all threads of the benchmark process, ms; the engine",
              "runs in its own process on the same 2 cores)", "",
              "| workers | raw pair | raw transaction pair | access-layer pair | batch payment |",
              "|---:|---:|---:|---:|---:|"]
    tx = r.get("limit_tx", {})
    for w in WORKERS:
        tx_text = f"{tx[str(w)]['cpu_ms']:.2f}" if str(w) in tx else "-"
        lines.append(f"| {w} | {r['limit'][str(w)]['cpu_ms']:.2f} | {tx_text} | {r['access_limit'][str(w)]['cpu_ms']:.2f} "
                     f"| {r['batch'][f'{w}/0']['cpu_ms']:.2f} |")
    lines += ["", "batch / raw pair, Python CPU per payment: "
              + ", ".join(f"{w} workers {r['batch'][f'{w}/0']['cpu_ms'] / r['limit'][str(w)]['cpu_ms']:.2f}"
                          for w in WORKERS)]
    if tx:
        lines += ["", "batch / raw transaction pair (the receipt, its event and its number's look-up in one "
                  "TransactWriteItems, as the batch sends them): "
                  + ", ".join(f"{w} workers {r['batch'][f'{w}/0']['cpu_ms'] / tx[str(w)]['cpu_ms']:.2f}"
                              for w in WORKERS)]
        lines += ["", "access-layer pair / raw transaction pair (the same two requests through PynamoDB and "
                  "our access functions; what is left of the batch is its query, gateway call, e-mail and "
                  "bookkeeping): "
                  + ", ".join(f"{w} workers {r['access_limit'][str(w)]['cpu_ms'] / tx[str(w)]['cpu_ms']:.2f}"
                              for w in WORKERS)]
    slow = r.get("slow_gateway")
    if slow:
        lines += ["", f"(8) gateway latency {slow['latency_ms']} ms per charge (load average "
                  f"{slow['load_before']:.1f} before, {slow['load_after']:.1f} after); the process's CPU limit "
                  f"is 1 / CPU per payment at {WORKERS[-1]} workers = {slow['cpu_limit']:.0f} payments/s", "",
                  "| workers | payments/s | ideal: min(workers / latency, CPU limit) | / ideal |", "|---:|---:|---:|---:|"]
        for w in SLOW_GATEWAY_WORKERS:
            x = slow[str(w)]
            lines.append(f"| {w} | {x['rate']:.0f} | {x['ideal']:.0f} | {x['rate'] / x['ideal']:.2f} |")
    ops = r["batch"]["8/0"]["requests"]
    lines += ["", f"(3) the same {due:,} due payments in tables of different sizes (8 workers, latency 0)", "",
              "| subscriptions in table | payments/s | Scan baseline payments/s | batch / Scan |", "|---:|---:|---:|---:|"]
    for size in SIZES:
        rate = r["sizes"][str(size)]["rate"]
        scan = r["scan"].get(str(size))
        scan_text = f"{scan['rate']:.0f} | {rate / scan['rate']:.1f}x" if scan else "- | -"
        lines.append(f"| {size:,} | {rate:.0f} | {scan_text} |")
    per = ", ".join(f"{name} {n / due:.3f}" for name, n in sorted(ops.items()))
    scans = "; ".join(f"{int(size):,} subscriptions: {v['requests'].get('Scan', 0)} Scan pages in "
                      f"{v['find_by_scan_s']:.2f} s against one GSI-2 Query in {v['find_by_query_s']:.2f} s"
                      for size, v in r["scan"].items())
    lines += ["", f"(4) the Scan baseline reads the whole table to find {due:,} due items ({scans}); "
              f"on DynamoDB a Scan is billed for every item it reads, so its cost grows with the table.",
              "", f"(5) DynamoDB requests per payment (8 workers): {per} "
              f"(total {sum(ops.values()) / due:.3f}; includes the BatchRun record's PutItem + UpdateItem).",
              ""]
    rec = r.get("reconcile")
    if rec:
        per_charge = ", ".join(f"{name} {n / max(rec['charges'], 1):.2f}" for name, n in sorted(rec["requests"].items()))
        lines += [f"(9) the payment run's reconciliation of the days before it: {rec['charges']:,} charges read "
                  f"against their receipts in {rec['ms_per_charge']:.2f} ms each ({rec['cpu_ms_per_charge']:.2f} ms "
                  f"Python CPU); DynamoDB requests per charge: {per_charge or 'none'}, plus one gateway list. "
                  f"{rec['differences']} difference(s) found.", ""]
    lines += [f"Total benchmark time: {r['total_seconds'] / 60:.1f} min."]
    return "\n".join(lines)


def write_performance_md(report: str) -> None:
    path = ROOT / "docs" / "PERFORMANCE.md"
    text = path.read_text() if path.exists() else ""
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    block = f"{start}\n{report}\n{end}"
    if start in text and end in text:
        text = text.split(start)[0] + block + text.split(end, 1)[1]
    else:
        text = text + ("\n" if text else "") + block + "\n"
    path.write_text(text)


if __name__ == "__main__":
    main()
