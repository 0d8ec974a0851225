"""What the two batch commands share: options, signals, progress, the summary line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from contextlib import contextmanager
from datetime import date
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing import access, batches
from billing.batches import RunSummary, ShardSet
from billing.management.batchprocesses import CHILD_ENV, run_in_processes
from core.clock import billing_today
from core.dynamo.command import BillingCommand
from core.ops.pings import ping


def parse_date(value: str | None, option: str = "--date") -> date | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        # One line, and exit status 1: "2026-02-30" has the right shape but is no day.
        raise CommandError(f"{option} {value!r} is not a date: give a day of the calendar as YYYY-MM-DD") from None
    # Never ahead of the clock (docs/MONEY.md M3): a payment taken early lands outside the
    # customer's paid period and receipts window, and a reminder would be sent early.
    today = billing_today(settings.BILLING_TIMEZONE)
    if day > today:
        raise CommandError(f"{option} {day} is after today ({today} in {settings.BILLING_TIMEZONE}): "
                           "a batch never runs ahead of the clock")
    return day


@contextmanager
def stop_on_signals(stop: threading.Event):
    """SIGTERM / SIGINT ask the run to stop after the items in hand (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


class BatchCommand(BillingCommand):
    """``--date``, ``--workers``, ``--dry-run``, ``--json``; one line per item when not on a
    terminal (cron logs), a progress bar when on one, and a one-line summary."""

    kind = ""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--date", help="the day to process, YYYY-MM-DD (default: today in BILLING_TIMEZONE)")
        parser.add_argument("--workers", type=int, default=8, help="parallel workers (default 8)")
        parser.add_argument("--dry-run", action="store_true", help="charge, write and send nothing")
        parser.add_argument("--json", action="store_true", help="print the summary as one JSON line")
        parser.add_argument("--catch-up-days", type=int, default=31,
                            help="take missed earlier dates back to this many days (default 31; 0: none)")
        # Split a day over hosts and processes by the due indexes' shards.
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--shards", metavar="I-J", help="take only shards I to J (from 0) of the table's shards")
        where.add_argument("--shard", metavar="K/N", help="host K (from 0) of N: take its share of the shards")
        where.add_argument("--hosts", type=int, metavar="N",
                           help="host JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) of N: take its share")
        parser.add_argument("--processes", type=int, default=1, metavar="P",
                            help="split this run's shards over P processes on this host (default 1)")

    def run(self, **kwargs: Any) -> RunSummary:
        raise NotImplementedError

    def run_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The command's own options, as keyword arguments of ``run``."""
        return {}

    def child_arguments(self, options: dict[str, Any]) -> list[str]:
        """The command's own options, for each child of ``--processes``."""
        return []

    def execute(self, *args: Any, **options: Any) -> Any:
        # The dead-man's switch (core/ops/pings.py): a real run, not a --processes child
        # (its parent pings) nor a dry run, tells the monitor it started, then how it ended.
        monitor = "" if options.get("dry_run") or os.environ.get(CHILD_ENV) else settings.BATCH_PING_URL
        stderr = options.get("stderr") or sys.stderr

        def warn(line: str) -> None:
            stderr.write(line + "\n")

        ping(monitor, str(self.kind), "start", warn=warn)
        # With --json, cron's log gets one JSON line whatever happens: a summary, or the
        # error that stopped the command (exit status 1 either way).
        try:
            result = super().execute(*args, **options)
        except CommandError as error:
            if options.get("json") and not getattr(error, "summary_printed", False):
                self.stdout.write(json.dumps(self.empty_summary(options, outcome="error", error=str(error)),
                                             sort_keys=True))
            ping(monitor, str(self.kind), "fail", f"exit status {error.returncode}: {error}", warn=warn)
            raise
        except BaseException as error:
            ping(monitor, str(self.kind), "fail", f"exit status 1: {type(error).__name__}: {error}", warn=warn)
            raise
        ping(monitor, str(self.kind), "", "exit status 0", warn=warn)
        return result

    def empty_summary(self, options: dict[str, Any], *, outcome: str, error: str | None = None,
                      note: str | None = None) -> dict[str, Any]:
        """The JSON summary of a run that took nothing (refused, or no shard for this
        host): the same keys as every summary."""
        summary = RunSummary(self.kind, [], dry_run=bool(options.get("dry_run"))).as_dict()
        return {**summary, "outcome": outcome, "error": error, "note": note}

    def shard_choice(self, options: dict[str, Any]) -> tuple[bool, ShardSet | None]:
        """(any shard to take, which: None for every shard), from the options and the
        table's recorded shard count (a setting that disagrees with it is an error)."""
        try:
            layout = access.check_due_shards()
        except access.DueShardsMismatch as error:
            raise CommandError(str(error)) from None
        count = layout.read_shards
        try:
            if options["shards"]:
                return True, batches.parse_range(options["shards"], count)
            if options["shard"]:
                share = batches.parse_host_share(options["shard"], count)
            elif options["hosts"] is not None:
                index = os.environ.get("JOB_COMPLETION_INDEX", "")
                if not index.isdigit():
                    raise CommandError("--hosts N takes this host's number from JOB_COMPLETION_INDEX, which is "
                                       f"{index or 'not set'}: use --shard K/N outside an Indexed Job")
                share = batches.host_share(int(index), options["hosts"], count)
            else:
                return True, None
        except batches.ShardChoiceError as error:
            raise CommandError(str(error)) from None
        return share is not None, share

    def handle(self, *args: Any, **options: Any) -> None:
        run_date = parse_date(options["date"])
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        if options["catch_up_days"] < 0:
            raise CommandError("--catch-up-days must be 0 or more")
        if options["processes"] < 1:
            raise CommandError("--processes must be at least 1")
        anything, shards = self.shard_choice(options)
        if not anything:
            # More hosts than shards: this one has nothing to do, and says so.
            self.stdout.write(json.dumps(self.empty_summary(options, outcome="completed",
                                                            note="no shard for this host"), sort_keys=True)
                              if options["json"]
                              else f"{self.kind}: no shard for this host (more hosts than shards)")
            return
        if options["processes"] > 1:
            self.handle_processes(run_date, shards, options)
            return
        for run in access.abandoned_batch_runs(self.kind):
            # First, before anything else is printed: staff and cron logs must see it.
            self.stderr.write(f"previous {self.kind} run {run.RunId} (started {run.StartedAt} on "
                              f"{run.Host or '?'}) was abandoned: no heartbeat since {run.LeaseUntil}; "
                              "this run takes over its dates")
            if not options["dry_run"]:
                with contextlib.suppress(access.ConditionFailed):
                    access.mark_batch_run_abandoned(run)
        tty = hasattr(self.stdout, "isatty") and self.stdout.isatty() and not options["json"]
        item_lines = not options["json"] and (not tty or options["verbosity"] >= 2)
        write_lock = threading.Lock()
        bar = None
        if tty:
            from tqdm import tqdm

            # The total grows as each date's items are counted; tqdm then shows time left.
            bar = tqdm(total=0, unit=" items", file=sys.stdout, dynamic_ncols=True, desc=str(self.kind))

        def on_total(count: int) -> None:
            with write_lock:
                bar.total += count
                bar.refresh()

        def on_item(outcome: Any) -> None:
            with write_lock:
                if bar is not None:
                    bar.update(1)
                if item_lines and options["verbosity"] >= 1:
                    if bar is not None:
                        bar.write(outcome.line(), file=sys.stdout)  # above the bar, not into it
                    else:
                        self.stdout.write(outcome.line())

        stop = threading.Event()
        try:
            with stop_on_signals(stop):
                summary = self.run(
                    run_date=run_date, workers=options["workers"], dry_run=options["dry_run"],
                    catch_up_days=options["catch_up_days"], stop=stop, on_item=on_item,
                    on_total=on_total if bar is not None else None, shards=shards, **self.run_options(options),
                )
        finally:
            if bar is not None:
                bar.close()
        self.report(summary, options)

    def handle_processes(self, run_date: date | None, shards: ShardSet | None, options: dict[str, Any]) -> None:
        """``--processes P``: P children, each its slice of the shards and its own run record."""
        whole = shards or batches.ShardSet.every(access.due_shard_layout().read_shards)
        slices = whole.split(options["processes"])
        stop = threading.Event()
        with stop_on_signals(stop):
            summary = run_in_processes(
                self.__module__.rsplit(".", 1)[-1], self.kind, slices,
                run_date=run_date or billing_today(settings.BILLING_TIMEZONE), workers=options["workers"],
                catch_up_days=options["catch_up_days"], dry_run=options["dry_run"], stop=stop, whole=shards,
                extra=self.child_arguments(options))
        self.report(summary, options)

    def report(self, summary: RunSummary, options: dict[str, Any]) -> None:
        """The one summary line (or JSON line), then the exit status it calls for."""
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict(), sort_keys=True))
        else:
            self.stdout.write(summary.line())
        for line in summary.differences:
            self.stderr.write(f"difference: {line}")
        if summary.halted:
            done = summary.counts["processed"] - summary.counts["errors"]
            raise _after_summary(CommandError(
                f"DynamoDB could not record the {self.kind} ({summary.halted}): stopped taking new ones after "
                f"{done}; the next run carries on"))
        if summary.counts["errors"]:
            raise _after_summary(CommandError(
                f"{summary.counts['errors']} item(s) failed with infrastructure errors; "
                f"the next run retries them (first: {summary.failures[-1]['reason'] if summary.failures else '?'})"
            ))
        if summary.interrupted:
            raise _after_summary(
                CommandError("stopped by a signal after finishing the items in hand; the next run continues"))
        if summary.counts["differences"]:
            raise _after_summary(CommandError(
                f"{summary.counts['differences']} difference(s) between the gateway and the receipts left for a "
                "person (above); reconcile_payments shows them again"))


def _after_summary(error: CommandError) -> CommandError:
    error.summary_printed = True  # the JSON summary already says what happened
    return error
