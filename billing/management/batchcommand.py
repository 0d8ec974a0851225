"""What the two batch commands share: options, signals, progress, the summary line."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from contextlib import contextmanager
from datetime import date
from typing import Any

from django.core.management.base import CommandError

from billing import access
from billing.batches import RunSummary
from billing.management.base import BillingCommand


def parse_date(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--date must be a date as YYYY-MM-DD, not {value!r}") from None


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

    def run(self, **kwargs: Any) -> RunSummary:
        raise NotImplementedError

    def execute(self, *args: Any, **options: Any) -> Any:
        # With --json, cron's log gets one JSON line whatever happens: a summary, or the
        # error that stopped the command (exit status 1 either way).
        try:
            return super().execute(*args, **options)
        except CommandError as error:
            if options.get("json") and not getattr(error, "summary_printed", False):
                self.stdout.write(json.dumps({"kind": str(self.kind), "outcome": "error", "error": str(error),
                                              "dry_run": bool(options.get("dry_run"))}, sort_keys=True))
            raise

    def handle(self, *args: Any, **options: Any) -> None:
        run_date = parse_date(options["date"])
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        if options["catch_up_days"] < 0:
            raise CommandError("--catch-up-days must be 0 or more")
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
                    on_total=on_total if bar is not None else None,
                )
        finally:
            if bar is not None:
                bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict(), sort_keys=True))
        else:
            self.stdout.write(summary.line())
        if summary.counts["errors"]:
            raise _after_summary(CommandError(
                f"{summary.counts['errors']} item(s) failed with infrastructure errors; "
                f"the next run retries them (first: {summary.failures[-1]['reason'] if summary.failures else '?'})"
            ))
        if summary.interrupted:
            raise _after_summary(
                CommandError("stopped by a signal after finishing the items in hand; the next run continues"))


def _after_summary(error: CommandError) -> CommandError:
    error.summary_printed = True  # the JSON summary already says what happened
    return error
