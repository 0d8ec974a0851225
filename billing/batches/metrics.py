"""The batches' runs as metrics (core/ops/metrics.py reads them at scrape time): one Query
per kind for its newest run records; the newest billing day's runs (every host's and
process's) are summed."""

from __future__ import annotations

from datetime import datetime

from billing import access
from billing.models import BatchKind, BatchRun, RunOutcome
from core.ops.metrics import RunFacts

RUNS_READ = 50  # the newest records of a kind: a day split over many hosts fits
NOT_ITEMS = ("processed", "gateway_ms", "gateway_calls", "mail_errors")


def _epoch(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp).timestamp() if stamp else None


def facts_of(kind: str, runs: list[BatchRun], now_iso: str) -> RunFacts:
    facts = RunFacts(kind=str(kind))
    if not runs:
        return facts
    newest = runs[0]
    facts.last_started = _epoch(newest.StartedAt)
    facts.failed = newest.status_at(now_iso) in (RunOutcome.FAILED, RunOutcome.ABANDONED)
    completed = [run for run in runs if run.Outcome == RunOutcome.COMPLETED and run.FinishedAt]
    if completed:
        facts.last_success = max(_epoch(run.FinishedAt) for run in completed)
    finished = [run for run in runs if run.FinishedAt]
    if finished:
        # A day's runs are those that billed its date (every host's and process's), not those
        # started on one UTC date: east or west of UTC a billing day's runs may start on two
        # UTC dates, and one UTC date may hold the runs of two billing days.
        day = finished[0].LastDate
        today = [run for run in finished if run.LastDate == day]
        facts.duration = max(_epoch(run.FinishedAt) - _epoch(run.StartedAt) for run in today)
        ms = calls = 0
        for run in today:
            for name, value in (run.Counts or {}).items():
                if name.startswith("charged:"):
                    currency = name.split(":", 1)[1]
                    facts.charged[currency] = facts.charged.get(currency, 0) + value
                elif name not in NOT_ITEMS:
                    facts.items[name] = facts.items.get(name, 0) + value
            ms += (run.Counts or {}).get("gateway_ms", 0)
            calls += (run.Counts or {}).get("gateway_calls", 0)
        facts.gateway_seconds = ms / calls / 1000 if calls else None
    return facts


def run_facts() -> list[RunFacts]:
    now_iso = access.utc_now().isoformat(timespec="microseconds")
    return [facts_of(kind, access.list_batch_runs(kind, limit=RUNS_READ), now_iso) for kind in BatchKind]
