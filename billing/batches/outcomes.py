"""What a batch reports: the outcome of one reminder, and the summary of a run (printed by
the commands and stored in its BatchRun). A payment's outcome is the payment operation's
(billing/operations/outcomes.py): the portal and staff take payments too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any

from billing.models import BatchKind, RunOutcome


class ReminderStatus(StrEnum):
    SENT = "sent"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"
    ERROR = "error"


@dataclass
class ReminderOutcome:
    status: ReminderStatus
    sub_id: str
    account_id: str
    day: date | None = None
    payment_date: date | None = None
    reason: str = ""
    mail_error: str = ""

    def line(self) -> str:
        what = f"{self.status} reminder sub {self.sub_id}"
        if self.payment_date:
            what += f" for {self.payment_date}"
        return what + (f" ({self.reason})" if self.reason else "")


# reconciled / differences: the charges the run's reconciliation fixed, and those it left
# (billing/batches/reconcile.py).
PAYMENT_COUNTS = ("processed", "paid", "declined", "retried", "cancelled", "skipped", "errors", "reconciled",
                  "differences")


REMINDER_COUNTS = ("processed", "sent", "skipped", "errors")
# Counted by both batches, printed in the JSON summary even when 0.
ALWAYS_COUNTED = ("action_required", "mail_errors", "gateway_calls", "gateway_ms")
# In a payment run's JSON only (its summary line says them when there are any): first
# payments never confirmed with the bank, expired by the run; the last periods' usage of
# cancelled subscriptions, charged (or declined) by the run.
PAYMENT_JSON_COUNTS = ("expired", "usage_billed", "usage_declined")
# In a reminder run's JSON only: the reminders of the last usage charges of subscriptions
# ending at their period's end (billing/batches/usage_reminders.py).
REMINDER_JSON_COUNTS = ("last_usage_reminded",)


@dataclass
class RunSummary:
    """The result of one run, as printed by the commands and stored in its BatchRun."""

    kind: BatchKind
    dates: list[date]
    dry_run: bool = False
    counts: Counter = field(default_factory=Counter)
    failures: list[dict] = field(default_factory=list)
    elapsed: float = 0.0
    interrupted: bool = False
    run_id: str | None = None
    # The shards taken ("first-last/count"; None: all) and, for a run split over
    # processes, each process's run record (then run_id is None: one record per process).
    shards: str | None = None
    run_ids: list[str] = field(default_factory=list)
    processes: int = 1
    # Why the run stopped taking items: the engine could not record them (None: it did not).
    halted: str | None = None
    # The run's reconciliation: the charges it checked, and each difference it left.
    reconciled_charges: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.counts["processed"] / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def outcome(self) -> RunOutcome:
        if self.counts["errors"]:
            return RunOutcome.FAILED
        return RunOutcome.INTERRUPTED if self.interrupted else RunOutcome.COMPLETED

    @property
    def ok(self) -> bool:
        """Every item ended in a business outcome (exit status 0)."""
        return self.outcome == RunOutcome.COMPLETED

    def as_dict(self) -> dict[str, Any]:
        """The run as ``--json`` prints it: every key always present, whatever happened
        (cron's log parsers and dashboards read the same keys every time), ``dry_run``
        always the boolean (the count of items a dry run went through is ``dry_run_items``),
        what was charged by currency under ``charged``."""
        names = (*PAYMENT_COUNTS, *PAYMENT_JSON_COUNTS) if self.kind == BatchKind.PAYMENTS \
            else (*REMINDER_COUNTS, *REMINDER_JSON_COUNTS)
        counts = {name: self.counts[name] for name in (*names, *ALWAYS_COUNTED)}
        charged = {k.split(":", 1)[1]: v for k, v in sorted(self.counts.items()) if k.startswith("charged:")}
        counts.update({str(k): v for k, v in self.counts.items()
                       if k not in counts and k != "dry_run" and not k.startswith("charged:")})
        return {
            "kind": str(self.kind),
            "run_id": self.run_id,
            "first_date": self.dates[0].isoformat() if self.dates else None,
            "last_date": self.dates[-1].isoformat() if self.dates else None,
            "outcome": str(self.outcome),
            **counts,
            "dry_run": bool(self.dry_run),
            "dry_run_items": self.counts["dry_run"],
            "charged": charged,
            "elapsed": round(self.elapsed, 3),
            "rate": round(self.rate, 1),
            "failures": self.failures[:20],
            "shards": self.shards,
            "halted": self.halted,
            "differences_left": self.differences[:20],
            "run_ids": self.run_ids,
            "processes": self.processes,
            "error": None,
            "note": None,
        }

    def line(self) -> str:
        names = PAYMENT_COUNTS if self.kind == BatchKind.PAYMENTS else REMINDER_COUNTS
        parts = [f"{n} {self.counts[n]}" for n in names]
        if self.counts["action_required"]:  # renewals waiting for the customer's bank
            parts.insert(3, f"action required {self.counts['action_required']}")
        if self.counts["expired"]:  # first payments never confirmed with the bank
            parts.append(f"expired {self.counts['expired']}")
        # cancelled subscriptions' last usage: charged, declined, reminded
        for name in ("usage_billed", "usage_declined", "last_usage_reminded"):
            if self.counts[name]:
                parts.append(f"{name.replace('_', ' ')} {self.counts[name]}")
        if self.dry_run:
            parts.append(f"dry-run {self.counts['dry_run']}")
        span = self.dates[0].isoformat() if self.dates else "-"
        if len(self.dates) > 1:
            span += f"..{self.dates[-1].isoformat()}"
        if self.shards:
            span += f" shards {self.shards}"
        if self.processes > 1:
            span += f" in {self.processes} processes"
        text = (f"{self.kind} {span}: " + ", ".join(parts)
                + f", elapsed {self.elapsed:.1f}s, {self.rate:.1f}/s")
        if self.interrupted:
            text += " (interrupted)"
        return text
