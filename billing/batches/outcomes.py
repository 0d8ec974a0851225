"""What a batch reports: the outcome of one payment or reminder, and the summary of a run
(printed by the commands and stored in its BatchRun).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any

from billing.models import BatchKind, RunOutcome


class PaymentStatus(StrEnum):
    PAID = "paid"
    DECLINED = "declined"  # past due, a retry is scheduled
    CANCELLED = "cancelled"  # the last retry failed
    SKIPPED = "skipped"  # nothing to do: not due, or another run got there first
    DRY_RUN = "dry_run"
    ERROR = "error"  # infrastructure failed after retries; the next run repeats it safely
    # The bank asks the cardholder to confirm the charge (3-D Secure). At subscribing they
    # do it on the page (nothing is written until they do); for a renewal the subscription
    # is past due, "action required", and the customer is asked to come back and confirm.
    ACTION_REQUIRED = "action_required"


class ReminderStatus(StrEnum):
    SENT = "sent"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"
    ERROR = "error"


@dataclass
class PaymentOutcome:
    """What happened to one subscription's payment (``status``: a ``PaymentStatus``)."""

    status: PaymentStatus
    sub_id: str
    account_id: str
    due: date | None = None  # the NextPaymentDate processed
    period: date | None = None  # the billing date paid (BillingDate of the receipt): its first day
    period_end: date | None = None  # the last day the charge pays for
    amount: int | None = None  # minor units charged (or to charge)
    attempt: int = 0  # 0: first attempt of the period; N: N-th retry
    charge_id: str | None = None
    reason: str = ""
    next_payment: date | None = None
    mail_error: str = ""  # the outcome stands; the e-mail could not be sent
    currency: str | None = None
    gateway_ms: float | None = None  # how long the gateway took to answer the charge (metrics)
    client_secret: str = ""  # ACTION_REQUIRED: what Stripe.js confirms the charge with

    @property
    def is_retry(self) -> bool:
        return self.attempt > 0

    def line(self) -> str:
        what = f"{self.status} sub {self.sub_id}"
        if self.period:
            what += f" period {self.period}"
        if self.is_retry:
            what += f" retry {self.attempt}"
        if self.next_payment:
            what += f" next {self.next_payment}"
        return what + (f" ({self.reason})" if self.reason else "")


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
# payments never confirmed with the bank, expired by the run.
PAYMENT_JSON_COUNTS = ("expired",)


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
        names = (*PAYMENT_COUNTS, *PAYMENT_JSON_COUNTS) if self.kind == BatchKind.PAYMENTS else REMINDER_COUNTS
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
