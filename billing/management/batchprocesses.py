"""``--processes P``: one batch command split over P child processes on this host, each
taking a slice of the shards and recording its own run, merged into one summary.

Python runs one thread at a time per process (the GIL), so one process pays at most
about one core's worth of payments; P processes use P cores. Each child is the same
command with ``--shards a-b --json`` and the parent's date, so it catches up, leases and
records its run exactly as a run on another host would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import date, timedelta
from typing import Any

from django.conf import settings

from billing.batches import RunSummary, ShardSet
from billing.models import BatchKind

# Settings that say which table and gateway a run works on: a child gets the parent's
# (the environment may not hold them: a test, or a value set in a settings file).
FORWARDED_SETTINGS = ("DYNAMODB_TABLE", "DYNAMODB_ENDPOINT", "DUE_SHARDS", "AWS_REGION",
                      "PAYMENT_GATEWAY", "PAYMENT_GATEWAY_LEDGER", "PAYMENT_GATEWAY_LATENCY_MS",
                      "STRIPE_SECRET_KEY", "STRIPE_API_BASE", "BILLING_TIMEZONE")
NOT_COUNTS = frozenset({"elapsed", "rate", "processes"})
CHILD_ENV = "RPAY_BATCH_CHILD"  # set in a child's environment: its parent pings the monitor


def child_environment() -> dict[str, str]:
    env = dict(os.environ)
    for name in FORWARDED_SETTINGS:
        value = getattr(settings, name, None)
        env[name] = "" if value is None else str(value)
    env[CHILD_ENV] = "1"
    return env


def run_in_processes(command: str, kind: BatchKind, slices: list[ShardSet], *, run_date: date, workers: int,
                     catch_up_days: int, dry_run: bool, stop: threading.Event, whole: ShardSet | None,
                     extra: list[str] | None = None) -> RunSummary:
    """Start one child per slice, wait for all (passing SIGTERM/SIGINT on as SIGTERM), and
    merge their JSON summaries. A child that printed none counts as one error."""
    manage = str(settings.BASE_DIR / "manage.py")
    started = time.monotonic()
    children = []
    for part in slices:
        args = [sys.executable, manage, command, "--date", run_date.isoformat(), "--workers", str(workers),
                "--catch-up-days", str(catch_up_days), "--shards", f"{part.first}-{part.last}", "--json"]
        if dry_run:
            args.append("--dry-run")
        args += extra or []
        children.append((part, subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=child_environment(),
                                                cwd=str(settings.BASE_DIR))))
    outputs: dict[int, str] = {}
    readers = [threading.Thread(target=lambda n=n, p=p: outputs.__setitem__(n, p.stdout.read()), daemon=True)
               for n, (_, p) in enumerate(children)]
    for reader in readers:
        reader.start()
    forwarded = False
    while any(p.poll() is None for _, p in children):
        if stop.is_set() and not forwarded:
            forwarded = True
            for _, p in children:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
        stop.wait(0.2)
    for reader in readers:
        reader.join()
    summary = RunSummary(kind, [run_date], dry_run=dry_run, shards=str(whole) if whole else None,
                         processes=len(children))
    first = last = run_date
    for n, (part, proc) in enumerate(children):
        lines = [line for line in outputs.get(n, "").splitlines() if line.startswith("{")]
        result: dict[str, Any] = json.loads(lines[-1]) if lines else {}
        if not result or result.get("outcome") == "error":
            summary.counts["errors"] += 1
            reason = result.get("error") or f"exit status {proc.returncode}, no summary"
            summary.failures.append({"subject": f"process for shards {part}", "reason": reason})
            continue
        merge(summary, result)
        first = min(first, date.fromisoformat(result["first_date"]))
        last = max(last, date.fromisoformat(result["last_date"]))
    summary.dates = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    summary.elapsed = time.monotonic() - started
    return summary


def merge(summary: RunSummary, result: dict[str, Any]) -> None:
    """Add one child's JSON summary to the parent's."""
    summary.counts.update(Counter({k: v for k, v in result.items()
                                   if type(v) is int and k not in NOT_COUNTS}))
    summary.failures.extend(result.get("failures", []))
    summary.interrupted |= result.get("outcome") == "interrupted"
    summary.halted = summary.halted or result.get("halted")
    summary.differences.extend(result.get("differences_left", []))
    if result.get("run_id"):
        summary.run_ids.append(result["run_id"])
