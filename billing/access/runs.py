"""Batch-run records written by billing.batches: when a run started, how it ended, and
which dates it covered (the catch-up window starts after the last completed run).
"""

from __future__ import annotations

from datetime import date, timedelta

from billing.access._common import new_id, refused_as, utc_now
from billing.exceptions import ConditionFailed
from billing.models import BatchRun, RunOutcome

# How long a run's record counts as alive without a heartbeat; runs renew it every third.
RUN_LEASE = timedelta(seconds=90)


def _lease_until() -> str:
    return (utc_now() + RUN_LEASE).isoformat(timespec="microseconds")


def list_batch_runs(kind: str, *, limit: int = 50) -> list[BatchRun]:
    """The newest runs of one batch (``payments`` or ``reminders``), newest first: one Query."""
    return list(BatchRun.query(BatchRun.pk(kind=kind), scan_index_forward=False, limit=limit))


def start_batch_run(kind: str, *, first_date: date, last_date: date, host: str | None = None,
                    shards: tuple[int, int, int] | None = None) -> BatchRun:
    """Record that a run of ``kind`` started, covering ``first_date`` to ``last_date`` and
    the due-index shards ``shards`` = (first, last, of count); None: every shard."""
    first_shard, last_shard, shard_count = shards or (None, None, None)
    started = utc_now().isoformat(timespec="microseconds")
    run_id = new_id()
    run = BatchRun(
        BatchRun.pk(kind=kind),
        BatchRun.sk(started=started, run_id=run_id),
        Kind=kind, RunId=run_id, StartedAt=started,
        FirstDate=first_date.isoformat(), LastDate=last_date.isoformat(),
        Outcome=RunOutcome.RUNNING, LeaseUntil=_lease_until(), Counts={}, Failures=[], Host=host,
        ShardFirst=first_shard, ShardLast=last_shard, ShardCount=shard_count,
    )
    run.save(condition=BatchRun.SK.does_not_exist())
    return run


def renew_batch_run(run: BatchRun) -> BatchRun:
    """The heartbeat: push the lease on, only while the run is still recorded as running
    (``ConditionFailed`` once it has ended)."""
    with refused_as(ConditionFailed, run.SK):
        run.update(actions=[BatchRun.LeaseUntil.set(_lease_until())],
                   condition=BatchRun.Outcome == RunOutcome.RUNNING)
    return run


def abandoned_batch_runs(kind: str, *, look_back: int = 20) -> list[BatchRun]:
    """Recent runs of ``kind`` still recorded as running whose lease has passed: killed, or
    cut off from DynamoDB before they could record their end (not yet reported). One Query."""
    now = utc_now().isoformat(timespec="microseconds")
    return [run for run in list_batch_runs(kind, limit=look_back)
            if run.Outcome == RunOutcome.RUNNING and run.status_at(now) == RunOutcome.ABANDONED]


def mark_batch_run_abandoned(run: BatchRun) -> BatchRun:
    """Record that a run is abandoned, once (``ConditionFailed`` if it renewed or ended
    meanwhile, or another run marked it first)."""
    now = utc_now().isoformat(timespec="microseconds")
    with refused_as(ConditionFailed, run.SK):
        run.update(actions=[BatchRun.Outcome.set(RunOutcome.ABANDONED)],
                   condition=(BatchRun.Outcome == RunOutcome.RUNNING) & (BatchRun.LeaseUntil < now))
    return run


MAX_RECORDED_FAILURES = 200


def finish_batch_run(run: BatchRun, *, outcome: RunOutcome, counts: dict, failures: list[dict]) -> BatchRun:
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


def completed_batch_runs(kind: str, *, look_back: int = 200) -> list[BatchRun]:
    """The newest ``look_back`` completed runs of ``kind``, newest first (one Query, a page
    or two): with one record per host or process, catch-up looks at each shard's own."""
    runs = BatchRun.query(
        BatchRun.pk(kind=kind), scan_index_forward=False,
        filter_condition=BatchRun.Outcome == RunOutcome.COMPLETED, page_size=look_back,
    )
    found = []
    for run in runs:
        found.append(run)
        if len(found) >= look_back:
            break
    return found
