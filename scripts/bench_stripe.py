#!/usr/bin/env python
"""Section (10) of ``make bench``: the payment run through the Stripe gateway (the
``stripe`` library against localstripe) beside the simulated gateway; not a test.

What it compares is rpay's own Python CPU per payment (``time.process_time()`` of this
process, all its threads): localstripe and DynamoDB Local are processes of their own, so
their CPU is not in it. The machine's 2 cores are shared, so one run says little: after a
warm-up run of each gateway (one-off costs: imports, templates, the first connections) the
section runs ``rounds`` rounds, each the simulated and then the Stripe run at 8 and at 32
workers on fresh due payments, and reports the median of each, and of the per-round
ratios Stripe / simulated (two runs side by side share the machine's load).

localstripe slows as its state grows (its lists scan every object), so each round starts
it from an empty account (its flush route) with a new customer and card.

    .venv/bin/python scripts/bench_stripe.py                 # = BENCH_ONLY=stripe make bench
    .venv/bin/python scripts/bench_stripe.py --rounds 5 --due 300
    .venv/bin/python scripts/bench_stripe.py --profile 300   # cProfile of 300 charges, one thread
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchkit import SCALE  # noqa: E402  (scripts/ is on the path: this file's folder)

# localstripe answers one request at a time in one Python process, so fewer than (1)'s 2,000.
DUE = max(int(500 * SCALE), 40)
WORKERS = [8, 32]
ROUNDS = int(os.environ.get("BENCH_STRIPE_ROUNDS", "3"))
# Stripe's Python CPU per payment at most this many times the simulated gateway's.
AIM = 1.3

SeedDay = Callable[[str, date, str, int], None]


def gateway_run(gateway: Any, token: str, workers: int, prefix: str, day: date, due: int, seed_day: SeedDay) -> dict:
    """``due`` payments through ``gateway`` (the run's reconciliation left out: the
    simulated and the Stripe runs pay for the same work)."""
    from billing import batches

    seed_day(prefix, day, token, due)
    before, cpu = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    summary = batches.run_payments(run_date=day, workers=workers, catch_up_days=0, gateway=gateway, reconcile=False)
    cpu, after = time.process_time() - cpu, resource.getrusage(resource.RUSAGE_SELF)
    assert summary.counts["paid"] == due, summary.as_dict()
    # The kernel's share of the CPU (system calls, thread switches) and the thread switches
    # themselves (a thread that waits for the network or the GIL gives up the core).
    return {"elapsed": summary.elapsed, "rate": due / summary.elapsed, "cpu_ms": cpu / due * 1000,
            "system_ms": (after.ru_stime - before.ru_stime) / due * 1000,
            "switches": (after.ru_nvcsw - before.ru_nvcsw + after.ru_nivcsw - before.ru_nivcsw) / due}


def _fresh_card(server: Any, gateway: Any) -> str:
    """An empty localstripe account (its flush route, as the tests use it), then a
    customer with a saved card: the token the due subscriptions charge."""
    from core.payments.demo_cards import demo_card

    urllib.request.urlopen(urllib.request.Request(f"{server.url}/_config/data", method="DELETE"), timeout=30)
    customer = gateway.create_customer("bench", "bench@example.com")
    return demo_card(gateway, "visa", exp_year=2030, customer=customer).token


def run(tmp: Path, say: Callable[[str], None], *, seed_day: SeedDay, next_day: Callable[[], date],
        due: int = DUE, rounds: int = ROUNDS) -> dict:
    """(10): ``rounds`` rounds at each of ``WORKERS``; every run's figures and the medians."""
    from django.conf import settings

    from core.payments.demo_cards import demo_card
    from core.payments.simulated import SimulatedGateway
    from core.payments.stripe import StripeGateway
    from devtools.localengine import free_port
    from devtools.localstripe import start_localstripe

    server = start_localstripe(free_port(), log_file=tmp / "localstripe.log")
    saved = {name: getattr(settings, name) for name in server.settings()}
    try:
        for name, value in server.settings().items():
            setattr(settings, name, value)
        stripe_gateway = StripeGateway()
        simulated = SimulatedGateway(ledger_path=str(tmp / "stripe-section-ledger.sqlite3"))
        simulated_token = demo_card(simulated, "visa", exp_year=2030).token
        out: dict = {"due": due, "rounds": rounds, "load_before": os.getloadavg()[0],
                     "client": stripe_gateway.client._requestor._client.name}
        warm = max(due // 5, 20)
        gateway_run(simulated, simulated_token, WORKERS[0], "simw-", next_day(), warm, seed_day)
        gateway_run(stripe_gateway, _fresh_card(server, stripe_gateway), WORKERS[0], "strw-", next_day(), warm,
                    seed_day)
        for n in range(rounds):
            stripe_token = _fresh_card(server, stripe_gateway)
            for workers in WORKERS:
                sim = gateway_run(simulated, simulated_token, workers, f"sim{n}-{workers}-", next_day(), due,
                                  seed_day)
                real = gateway_run(stripe_gateway, stripe_token, workers, f"str{n}-{workers}-", next_day(), due,
                                   seed_day)
                out.setdefault(f"simulated/{workers}", []).append(sim)
                out.setdefault(f"stripe/{workers}", []).append(real)
                say(f"round {n + 1} workers {workers:2d}: simulated {sim['cpu_ms']:.2f} ms CPU/payment "
                    f"({sim['system_ms']:.2f} system, {sim['switches']:.1f} thread switches; {sim['rate']:.0f}/s), "
                    f"Stripe {real['cpu_ms']:.2f} ms ({real['system_ms']:.2f} system, {real['switches']:.1f} "
                    f"switches; {real['rate']:.0f}/s): Stripe / simulated {real['cpu_ms'] / sim['cpu_ms']:.2f}")
        out["load_after"] = os.getloadavg()[0]
        for workers in WORKERS:
            sims, reals = out[f"simulated/{workers}"], out[f"stripe/{workers}"]
            out[f"median/{workers}"] = {
                "simulated_cpu_ms": statistics.median(r["cpu_ms"] for r in sims),
                "stripe_cpu_ms": statistics.median(r["cpu_ms"] for r in reals),
                "simulated_rate": statistics.median(r["rate"] for r in sims),
                "stripe_rate": statistics.median(r["rate"] for r in reals),
                "ratio": statistics.median(b["cpu_ms"] / a["cpu_ms"] for a, b in zip(sims, reals, strict=True)),
            }
        return out
    finally:
        for name, value in saved.items():
            setattr(settings, name, value)
        server.stop()


def ratio_line(r: dict) -> str:
    """The figure the section is for, on one line (``make bench`` prints it last)."""
    ratios = ", ".join(f"{w} workers {r[f'median/{w}']['ratio']:.2f}" for w in WORKERS)
    met = all(r[f"median/{w}"]["ratio"] <= AIM for w in WORKERS)
    return (f"Stripe / simulated gateway, Python CPU per payment (median of {r['rounds']} rounds): {ratios} "
            f"(aim: at most {AIM:.2f}; {'met' if met else 'NOT met'})")


def render(r: dict) -> str:
    lines = [f"(10) the payment run through the Stripe gateway on localstripe (a real HTTP server, one Python "
             f"process on the same 2 cores) beside the simulated gateway: {r['due']:,} payments each run, the "
             f"run's reconciliation left out; medians of {r['rounds']} rounds after a warm-up run of each, "
             f"the Stripe library sending through its '{r['client']}' client (load average "
             f"{r['load_before']:.1f} before, {r['load_after']:.1f} after)", "",
             "| workers | simulated payments/s | Stripe payments/s | simulated CPU ms/payment | Stripe CPU ms/payment "
             "| Stripe / simulated CPU |", "|---:|---:|---:|---:|---:|---:|"]
    for w in WORKERS:
        m = r[f"median/{w}"]
        lines.append(f"| {w} | {m['simulated_rate']:.0f} | {m['stripe_rate']:.0f} | {m['simulated_cpu_ms']:.2f} "
                     f"| {m['stripe_cpu_ms']:.2f} | {m['ratio']:.2f} |")
    lines += ["", "Python CPU is this process's (rpay's side: the library building requests and parsing "
              "answers); localstripe's own CPU is not in it, but it shares the 2 cores, so Stripe payments/s "
              "here is localstripe's speed, not Stripe's. The ratio is the median of each round's Stripe / "
              "simulated (two runs side by side).", "", ratio_line(r)]
    return "\n".join(lines)


def profile(charges: int, top: int) -> None:
    """cProfile (CPU clock) of ``charges`` charges through the Stripe gateway, one after
    the other in this thread (cProfile sees one thread): where a charge's CPU goes."""
    from django.conf import settings

    from core.payments.stripe import StripeGateway
    from devtools.localengine import free_port
    from devtools.localstripe import start_localstripe

    tmp = Path(tempfile.mkdtemp(prefix="rpay-bench-stripe-"))
    server = start_localstripe(free_port(), log_file=tmp / "localstripe.log")
    try:
        for name, value in server.settings().items():
            setattr(settings, name, value)
        gateway = StripeGateway()
        token = _fresh_card(server, gateway)

        def charge(n: int, key: str) -> None:
            gateway.charge(token, 1000, "EUR", f"{key}{n}", {"subscription_id": f"sub{n}", "run": "bench"})

        for n in range(20):
            charge(n, "warm-")
        cpu = time.process_time()
        for n in range(charges):
            charge(n, "plain-")
        plain = (time.process_time() - cpu) / charges * 1000
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for n in range(charges):
            charge(n, "profiled-")
        profiler.disable()
        print(f"{plain:.3f} ms CPU per charge without the profiler (one thread, client "
              f"'{gateway.client._requestor._client.name}')")
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--due", type=int, default=DUE, help="payments in each run")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--profile", type=int, metavar="CHARGES", help="profile this many charges instead")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    from devtools.benchsetup import bench_engine, setup_django

    t0 = time.monotonic()
    if args.profile:
        setup_django("http://127.0.0.1:9", Path(tempfile.mkdtemp(prefix="rpay-bench-")))  # no table: charges only
        profile(args.profile, args.top)
        return
    with bench_engine() as (endpoint, tmp):
        import benchkit  # scripts/ is on the path: this file's folder

        benchkit.use_table("bench_stripe", endpoint)
        result = run(tmp, lambda text: print(f"[{time.monotonic() - t0:6.0f}s] {text}", flush=True),
                     seed_day=benchkit.seed_day, next_day=benchkit.next_day, due=args.due, rounds=args.rounds)
    print(render(result))


if __name__ == "__main__":
    main()
