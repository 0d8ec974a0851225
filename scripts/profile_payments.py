#!/usr/bin/env python
"""Profile the payment batch on DynamoDB Local (cProfile); not a test.

Starts its own engine (like scripts/bench.py, with the benchmarks' shared helpers in
scripts/benchkit.py), seeds ``--due`` subscriptions due on one date, and runs
``batches.run_payments`` under cProfile, then prints the top functions by own and
cumulative time. ``--compare`` instead measures, in one run, the CPU per payment of the
batch and of the bare request pair (benchkit's ``batch_run``, ``bare_loop`` and
``bare_tx_loop``: the pair with the receipt as one PutItem, as first measured, and as the
batch sends it today, one TransactWriteItems of receipt, event and number look-up),
alternating, ``--rounds`` times.

    .venv/bin/python scripts/profile_payments.py --due 1000 --workers 1
    .venv/bin/python scripts/profile_payments.py --compare --due 500 --workers 8 --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

# The repository (rpay's packages) and scripts/ (benchkit: this file's folder) on the path.
sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

import benchkit  # noqa: E402

from devtools.benchsetup import bench_engine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--due", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="write the raw profile here (pstats file)")
    args = parser.parse_args()
    with bench_engine("rpay-profile-") as (endpoint, tmp):
        from core.payments.demo_cards import demo_card
        from core.payments.simulated import SimulatedGateway

        ledger = str(tmp / "ledger.sqlite3")
        token = demo_card(SimulatedGateway(ledger_path=ledger), "visa", exp_year=2030).token
        benchkit.use_table("profile", endpoint)
        # Warm up: the engine's JIT and Django's template cache.
        benchkit.batch_run(token, args.workers, 0, ledger, args.due)
        benchkit.bare_loop(token, args.workers, args.due)
        benchkit.bare_tx_loop(token, args.workers, args.due)
        if args.compare:
            print(f"load average {os.getloadavg()[0]:.1f}")
            for n in range(args.rounds):
                bare = benchkit.bare_loop(token, args.workers, args.due)
                bare_tx = benchkit.bare_tx_loop(token, args.workers, args.due)
                batch = benchkit.batch_run(token, args.workers, args.latency_ms, ledger, args.due)
                print(f"round {n + 1}: bare pair {bare['cpu_ms']:.2f} ms ({bare['rate']:.0f}/s), "
                      f"bare transaction pair {bare_tx['cpu_ms']:.2f} ms ({bare_tx['rate']:.0f}/s), "
                      f"batch {batch['cpu_ms']:.2f} ms ({batch['rate']:.0f}/s); "
                      f"batch/bare CPU {batch['cpu_ms'] / bare['cpu_ms']:.2f}, "
                      f"batch/bare transaction pair {batch['cpu_ms'] / bare_tx['cpu_ms']:.2f}", flush=True)
            print(f"load average {os.getloadavg()[0]:.1f}")
            return
        # cProfile sees only the thread that enables it: the day's items are paid here,
        # in the main thread, as one worker of ``run_payments`` pays them (its Query
        # pages, ``take_payment`` per item, receipt numbers from the run's series), without
        # the pool and the run record.
        from django.core import mail

        from billing import access
        from billing.operations.payments import take_payment

        day = benchkit.next_day()
        benchkit.seed_due(day, token, args.due)
        gateway = SimulatedGateway(ledger_path=ledger, latency_ms=args.latency_ms)
        mail.outbox = []
        profile = cProfile.Profile(time.process_time)  # CPU, not the waits for the engine
        started = time.process_time()
        profile.enable()
        numbers = access.ReceiptNumbers()
        outcomes = [take_payment(sub, run_date=day, gateway=gateway, numbers=numbers)
                    for sub in access.get_due_payments_by_date(day)]
        profile.disable()
        cpu = time.process_time() - started
        assert sum(o.status == "paid" for o in outcomes) == args.due and len(mail.outbox) == args.due
        print(f"{cpu / args.due * 1000:.2f} ms CPU per payment (under the profiler)")
        if args.out:
            profile.dump_stats(args.out)
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
