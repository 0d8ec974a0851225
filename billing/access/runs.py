"""Batch-run records written by billing.batches: when a run started, how it ended, and
which dates it covered (the catch-up window starts after the last completed run).
"""

from __future__ import annotations

from datetime import date

from billing.models import BatchRun

from ._common import new_id, utc_now


def list_batch_runs(kind: str, *, limit: int = 50) -> list[BatchRun]:
    """The newest runs of one batch (``payments`` or ``reminders``), newest first: one Query."""
    return list(BatchRun.query(BatchRun.pk(kind=kind), scan_index_forward=False, limit=limit))


def start_batch_run(kind: str, *, first_date: date, last_date: date, host: str | None = None) -> BatchRun:
    """Record that a run of ``kind`` started, covering ``first_date`` to ``last_date``."""
    started = utc_now().isoformat(timespec="microseconds")
    run_id = new_id()
    run = BatchRun(
        BatchRun.pk(kind=kind),
        BatchRun.sk(started=started, run_id=run_id),
        Kind=kind, RunId=run_id, StartedAt=started,
        FirstDate=first_date.isoformat(), LastDate=last_date.isoformat(),
        Outcome="running", Counts={}, Failures=[], Host=host,
    )
    run.save(condition=BatchRun.SK.does_not_exist())
    return run


MAX_RECORDED_FAILURES = 200


def finish_batch_run(run: BatchRun, *, outcome: str, counts: dict, failures: list[dict]) -> BatchRun:
    """Record how a run ended. Failures are capped (an item holds at most 400 KB); the
    count of those left out is kept in ``Counts["failures_not_recorded"]``."""
    counts = dict(counts)
    if len(failures) > MAX_RECORDED_FAILURES:
        counts["failures_not_recorded"] = len(failures) - MAX_RECORDED_FAILURES
    run.update(actions=[
        BatchRun.FinishedAt.set(utc_now().isoformat(timespec="microseconds")),
        BatchRun.Outcome.set(outcome),
        BatchRun.Counts.set(counts),
        BatchRun.Failures.set(failures[:MAX_RECORDED_FAILURES]),
    ])
    return run


def last_completed_run(kind: str, *, look_back: int = 20) -> BatchRun | None:
    """Of the newest ``look_back`` completed runs, the one that covered the latest date
    (a manual re-run of an old date does not move the catch-up window back). One Query."""
    runs = BatchRun.query(
        BatchRun.pk(kind=kind), scan_index_forward=False,
        filter_condition=BatchRun.Outcome == "completed", page_size=look_back,
    )
    best: BatchRun | None = None
    for n, run in enumerate(runs):
        if best is None or run.LastDate > best.LastDate:
            best = run
        if n + 1 >= look_back:
            break
    return best
