"""The two daily batches: reminders and payments (orchestration over access + gateway + mail).

Each unit of work is made safe to repeat and to race by a condition, never by a
transaction (docs/TABLE.md, "Exactly one charge and one receipt"):

* a payment is charged with an idempotency key (``<SubId>:<BillingDate>``, the first
  day the charge pays for, and
  ``<SubId>:<BillingDate>:retry<N>`` for the N-th retry of a declined period: a
  gateway replays the recorded decline for a repeated key, so a retry needs a key of
  its own, while each attempt stays idempotent), its receipt is written only if
  absent, and the subscription advances only if ``NextPaymentDate`` still equals the
  date being processed. A process that dies between any two steps is repaired by the
  next run: the charge replays, the receipt is found, the advance happens once.
* a reminder is *claimed* (``NextReminderDate`` moves on, on condition it still
  equals the day) before its e-mail is sent, so two runs send it once; a process that
  dies between the claim and the e-mail loses that one e-mail (at most once).

Only the process that wins the conditional write sends the customer's e-mail.

The package: ``payments`` and ``reminders`` (one unit of work each), ``runs`` (the run
loop over the indexes), ``shards`` (which due-index shards a run takes), ``outcomes``
(what they report); e-mails go through
``core.mail``. This module is the package's public API: ``batches.<name>``.
"""

from billing.batches.outbound.sender import PASS_COUNTS, PassSummary, Sender, SenderConfig, signing_secrets
from billing.batches.outbound.signing import event_body, new_secret, signed_headers
from billing.batches.outcomes import (
    PAYMENT_COUNTS,
    REMINDER_COUNTS,
    PaymentOutcome,
    PaymentStatus,
    ReminderOutcome,
    ReminderStatus,
    RunSummary,
)
from billing.batches.payments import (
    GATEWAY_ATTEMPTS,
    charge_key,
    owed_amount,
    owed_period,
    record_paid_charge,
    take_first_payment,
    take_payment,
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
    "event_body",
    "new_secret",
    "signed_headers",
    "signing_secrets",
    "GATEWAY_ATTEMPTS",
    "PAYMENT_COUNTS",
    "REMINDER_COUNTS",
    "PaymentOutcome",
    "PaymentStatus",
    "ReminderOutcome",
    "ReminderStatus",
    "RunSummary",
    "ShardChoiceError",
    "ShardSet",
    "charge_key",
    "dates_to_cover",
    "host_share",
    "parse_host_share",
    "parse_range",
    "run_payments",
    "owed_amount",
    "owed_period",
    "record_paid_charge",
    "run_reminders",
    "send_reminder",
    "take_first_payment",
    "take_payment",
]
