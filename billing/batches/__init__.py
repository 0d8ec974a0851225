"""The two daily batches: reminders and payments (orchestration over access, the payment
operation, the gateway and mail).

Each unit of work is made safe to repeat and to race by a condition, never by a
transaction (docs/TABLE.md, "Exactly one charge and one receipt"):

* a payment is taken by billing/operations/payments.py (the portal and staff take
  payments through the same path): charged with an idempotency key, its receipt written
  only if absent, the subscription advanced only if still due; that module says how a
  process that dies between two steps is repaired by the next run.
* a reminder is *claimed* (``NextReminderDate`` moves on, on condition it still
  equals the day) before its e-mail is sent, so two runs send it once; a process that
  dies between the claim and the e-mail loses that one e-mail (at most once).

Only the process that wins the conditional write sends the customer's e-mail.

The package: ``reminders`` (one reminder), ``runs`` (the run loop over the indexes),
``shards`` (which due-index shards a run takes), ``reconcile`` (the gateway's charges
against the receipts), ``outcomes`` (what they report), ``outbound`` (the webhooks'
sender); e-mails go through ``core.mail``. This module is the package's public API:
``batches.<name>``; the payment itself is ``billing.operations.payments``'s.
"""

from billing.batches.outbound.sender import PASS_COUNTS, PassSummary, Sender, SenderConfig, signing_secrets
from billing.batches.outcomes import (
    PAYMENT_COUNTS,
    REMINDER_COUNTS,
    ReminderOutcome,
    ReminderStatus,
    RunSummary,
)
from billing.batches.reminders import send_reminder
from billing.batches.runs import dates_to_cover, run_payments, run_reminders
from billing.batches.shards import ShardSet, host_share, parse_host_share, parse_range
from billing.exceptions import ShardChoiceError

__all__ = [
    # outbound webhooks
    "PASS_COUNTS",
    "PassSummary",
    "Sender",
    "SenderConfig",
    "signing_secrets",
    "PAYMENT_COUNTS",
    "REMINDER_COUNTS",
    "ReminderOutcome",
    "ReminderStatus",
    "RunSummary",
    "ShardChoiceError",
    "ShardSet",
    "dates_to_cover",
    "host_share",
    "parse_host_share",
    "parse_range",
    "run_payments",
    "run_reminders",
    "send_reminder",
]
