"""What taking a payment reports: the outcome of one subscription's payment, whoever took it
(a payment run, the first payment at subscribing, staff's "retry now", a new card paying a
past-due period), and its status.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum


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

