"""The two daily batches: reminders and payments (orchestration over access + gateway + mail).

Each unit of work is made safe to repeat and to race by a condition, never by a
transaction (DESIGN.md invariant 5):

* a payment is charged with an idempotency key (``<SubId>:<BillingDate>``, and
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
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string

from . import access
from .gateway import ChargeResult, GatewayError, PaymentGateway, get_gateway
from .models import Subscription, SubscriptionStatus
from .schedule import billing_today, next_payment_date, next_retry_date

log = logging.getLogger(__name__)

PAYMENTS = "payments"
REMINDERS = "reminders"
GATEWAY_ATTEMPTS = 3  # a GatewayError leaves the outcome unknown: the same key is safe to repeat


# --- outcomes and summaries ------------------------------------------------------------


@dataclass
class PaymentOutcome:
    """What happened to one subscription's payment.

    ``status`` is one of ``paid``, ``declined`` (past due, a retry is scheduled),
    ``cancelled`` (the last retry failed), ``skipped`` (nothing to do: not due, or
    another run got there first), ``dry_run``, or ``error`` (infrastructure: DynamoDB
    or the gateway failed after retries; the next run repeats it safely).
    """

    status: str
    sub_id: str
    account_id: str
    due: date | None = None  # the NextPaymentDate processed
    period: date | None = None  # the billing date paid (BillingDate of the receipt)
    attempt: int = 0  # 0: first attempt of the period; N: N-th retry
    charge_id: str | None = None
    reason: str = ""
    next_payment: date | None = None
    mail_error: str = ""  # the outcome stands; the e-mail could not be sent

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
    status: str  # sent | skipped | dry_run | error
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


PAYMENT_COUNTS = ("processed", "paid", "declined", "retried", "cancelled", "skipped", "errors")
REMINDER_COUNTS = ("processed", "sent", "skipped", "errors")


@dataclass
class RunSummary:
    """The result of one run, as printed by the commands and stored in its BatchRun."""

    kind: str
    dates: list[date]
    dry_run: bool = False
    counts: Counter = field(default_factory=Counter)
    failures: list[dict] = field(default_factory=list)
    elapsed: float = 0.0
    interrupted: bool = False
    run_id: str | None = None

    @property
    def rate(self) -> float:
        return self.counts["processed"] / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def outcome(self) -> str:
        if self.counts["errors"]:
            return "failed"
        return "interrupted" if self.interrupted else "completed"

    @property
    def ok(self) -> bool:
        """Every item ended in a business outcome (exit status 0)."""
        return self.outcome == "completed"

    def as_dict(self) -> dict[str, Any]:
        names = PAYMENT_COUNTS if self.kind == PAYMENTS else REMINDER_COUNTS
        counts = {name: self.counts[name] for name in names}
        counts.update({k: v for k, v in self.counts.items() if k not in counts})
        return {
            "kind": self.kind,
            "run_id": self.run_id,
            "first_date": self.dates[0].isoformat() if self.dates else None,
            "last_date": self.dates[-1].isoformat() if self.dates else None,
            "dry_run": self.dry_run,
            "outcome": self.outcome,
            **counts,
            "elapsed": round(self.elapsed, 3),
            "rate": round(self.rate, 1),
            "failures": self.failures[:20],
        }

    def line(self) -> str:
        names = PAYMENT_COUNTS if self.kind == PAYMENTS else REMINDER_COUNTS
        parts = [f"{n} {self.counts[n]}" for n in names]
        if self.dry_run:
            parts.append(f"dry-run {self.counts['dry_run']}")
        span = self.dates[0].isoformat() if self.dates else "-"
        if len(self.dates) > 1:
            span += f"..{self.dates[-1].isoformat()}"
        text = (f"{self.kind} {span}: " + ", ".join(parts)
                + f", elapsed {self.elapsed:.1f}s, {self.rate:.1f}/s")
        if self.interrupted:
            text += " (interrupted)"
        return text


# --- settings the batches read ---------------------------------------------------------


def _days_before() -> int:
    return settings.REMINDER_DAYS_BEFORE


def charge_key(sub_id: str, period: date, attempt: int) -> str:
    """The gateway idempotency key of one attempt to pay one period."""
    key = f"{sub_id}:{period.isoformat()}"
    return key if attempt == 0 else f"{key}:retry{attempt}"


def _reminder_before(payment: date, run_date: date) -> date:
    """The reminder for ``payment``: ``REMINDER_DAYS_BEFORE`` earlier, but after today
    (today's reminder run may be over) and never after the payment itself."""
    remind = payment - timedelta(days=_days_before())
    return max(remind, min(run_date + timedelta(days=1), payment))


# --- money and mail --------------------------------------------------------------------

# ISO 4217 minor-unit exponents that are not 2.
_EXPONENTS = {"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "HUF": 2, "BHD": 3, "KWD": 3, "OMR": 3,
              "JOD": 3, "TND": 3}


def format_amount(amount: int, currency: str) -> str:
    """``999, "USD"`` -> ``"9.99 USD"``: integer arithmetic only (no floats on money)."""
    exponent = _EXPONENTS.get(currency.upper(), 2)
    sign = "-" if amount < 0 else ""
    whole, minor = divmod(abs(int(amount)), 10**exponent)
    text = f"{whole:,}" + (f".{minor:0{exponent}d}" if exponent else "")
    return f"{sign}{text} {currency.upper()}"


def _email(template: str, to: str, subject: str, context: dict[str, Any]) -> str:
    """Send one e-mail (text + HTML); returns "" or what went wrong. The payment or
    claim it reports is already written, so a mail failure must not undo or repeat it."""
    try:
        _send(template, to, subject, context)
    except Exception as error:
        log.warning("e-mail %s to account failed: %s", template, error)
        return f"mail: {type(error).__name__}: {error}".splitlines()[0]
    return ""


def _send(template: str, to: str, subject: str, context: dict[str, Any]) -> None:
    context = {**context, "site_url": settings.SITE_URL.rstrip("/"), "portal_url": settings.SITE_URL.rstrip("/") + "/"}
    text = render_to_string(f"billing/email/{template}.txt", context)
    html = render_to_string(f"billing/email/{template}.html", context)
    send_mail(subject, text, None, [to], html_message=html)


def _sub_context(sub: Subscription) -> dict[str, Any]:
    card = sub.PaymentDetails
    return {
        "product": sub.ProductName or sub.SKU,
        "amount": format_amount(sub.PaymentAmount, sub.Currency),
        "card": f"{card.Brand} ending {card.Last4}" if card else "your card on file",
        "last4": card.Last4 if card else "",
        "sub_id": sub.sub_id,
    }


# --- one payment -----------------------------------------------------------------------


def _charge(gateway: PaymentGateway, sub: Subscription, key: str, period: date, attempt: int) -> ChargeResult:
    metadata = {"sub_id": sub.sub_id, "billing_date": period.isoformat(), "attempt": str(attempt)}
    for n in range(GATEWAY_ATTEMPTS):
        try:
            return gateway.charge(sub.PaymentDetails.Token, sub.PaymentAmount, sub.Currency, key, metadata)
        except GatewayError:
            if n + 1 == GATEWAY_ATTEMPTS:
                raise
            time.sleep(0.2 * 2**n)
    raise AssertionError("unreachable")


def take_payment(
    sub: Subscription, *, run_date: date, dry_run: bool = False, gateway: PaymentGateway | None = None
) -> PaymentOutcome:
    """Charge one subscription for the payment it is due (its ``NextPaymentDate``).

    ``sub`` is the item as read from GSI-2 or by GetItem. An active subscription is
    charged only when due on or before ``run_date``; a past-due one may be retried
    early (staff's "retry now"). Safe to call again after a crash at any point and to
    call from two processes at once: see the module docstring. DynamoDB and gateway
    failures raise (the caller counts them as errors); business outcomes are returned.
    """
    out = PaymentOutcome("skipped", sub.sub_id, sub.account_id)
    if not sub.is_live or not sub.NextPaymentDate:
        out.reason = "not live"
        return out
    due = out.due = date.fromisoformat(sub.NextPaymentDate)
    retrying = bool(sub.BillingPeriod)
    period = out.period = date.fromisoformat(sub.BillingPeriod) if retrying else due
    out.attempt = (sub.RetryCount or 0) + 1 if retrying else 0
    if due > run_date and not retrying:
        out.reason = f"not due until {due}"
        return out
    if dry_run:
        out.status, out.reason = "dry_run", f"would charge {format_amount(sub.PaymentAmount, sub.Currency)}"
        return out

    result = _charge(gateway or get_gateway(), sub, charge_key(sub.sub_id, period, out.attempt), period, out.attempt)
    out.charge_id = result.charge_id
    if result.succeeded:
        return _paid(sub, out, result, run_date)
    return _declined(sub, out, result, run_date)


def _paid(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date) -> PaymentOutcome:
    assert out.period and out.due
    # The receipt first: if we die after it, the re-run finds it and only advances.
    access.create_receipt(
        sub, billing_date=out.period, amount=result.amount, currency=result.currency,
        charge_id=result.charge_id, retention_days=settings.RECEIPT_RETENTION_DAYS,
    )
    next_payment = next_payment_date(sub.PaymentDay, out.period)
    try:
        access.advance_after_payment(
            sub, slot=out.due, paid_period=out.period, next_payment=next_payment,
            next_reminder=_reminder_before(next_payment, run_date),
        )
    except access.ConditionFailed:
        out.reason = "already advanced by another run"
        return out
    out.status, out.next_payment = "paid", next_payment
    out.mail_error = _email("receipt", sub.Email, f"Receipt: {sub.ProductName or sub.SKU}, {out.period:%d %b %Y}", {
        **_sub_context(sub), "amount": format_amount(result.amount, result.currency),
        "billing_date": out.period, "charge_id": result.charge_id, "next_payment": next_payment,
    })
    return out


def _declined(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date) -> PaymentOutcome:
    assert out.period and out.due
    failed_retries = out.attempt  # the first attempt is not a retry
    retry_on = next_retry_date(out.period, settings.PAYMENT_RETRY_DAYS, failed_retries)
    reason = result.decline_code or "declined"
    context = {**_sub_context(sub), "billing_date": out.period, "decline_code": reason, "retry_on": retry_on}
    if retry_on is None:
        try:
            access.cancel_subscription(sub, reason="payment_failed", check_version=False)
        except access.ConditionFailed:
            out.reason = "already cancelled or changed by another run"
            return out
        out.status, out.reason = "cancelled", f"{reason}; no retry left"
        out.mail_error = _email("subscription_cancelled", sub.Email, f"Subscription cancelled: {context['product']}", context)
        return out
    # The reminder for the next period: the retry does not move the anchor schedule.
    next_anchor = next_payment_date(sub.PaymentDay, out.period)
    try:
        access.mark_past_due(
            sub, slot=out.due, period=out.period, failed_retries=failed_retries, retry_on=retry_on,
            next_reminder=_reminder_before(next_anchor, run_date),
        )
    except access.ConditionFailed:
        out.reason = "already handled by another run"
        return out
    out.status, out.reason, out.next_payment = "declined", f"{reason}; retry on {retry_on}", retry_on
    out.mail_error = _email("payment_declined", sub.Email, f"Payment declined: {context['product']}", context)
    return out


# --- one reminder ----------------------------------------------------------------------


def _reminded_payment_date(sub: Subscription, day: date) -> date:
    """The payment a reminder due on ``day`` announces. While past due,
    ``NextPaymentDate`` is a retry date, and the reminder is for the next anchor date,
    ``REMINDER_DAYS_BEFORE`` after ``day``."""
    if sub.Status == SubscriptionStatus.PAST_DUE or not sub.NextPaymentDate:
        return day + timedelta(days=_days_before())
    return date.fromisoformat(sub.NextPaymentDate)


def _following_reminder(sub: Subscription, payment: date) -> date:
    """The reminder of the payment after ``payment``, on the subscription's anchor day
    (GSI-1 projects ``PaymentDay`` for this: no GetItem per reminder)."""
    following = next_payment_date(sub.PaymentDay, payment)
    return following - timedelta(days=_days_before())


def send_reminder(sub: Subscription, *, day: date, dry_run: bool = False) -> ReminderOutcome:
    """Claim the reminder due on ``day`` (conditional update), then e-mail it."""
    out = ReminderOutcome("skipped", sub.sub_id, sub.account_id, day=day)
    if not sub.is_live or sub.NextReminderDate != day.isoformat():
        out.reason = "not live or not due"
        return out
    payment = out.payment_date = _reminded_payment_date(sub, day)
    if dry_run:
        out.status = "dry_run"
        return out
    try:
        access.claim_reminder(sub, day=day, next_reminder=max(_following_reminder(sub, payment), day + timedelta(days=1)))
    except access.ConditionFailed:
        out.reason = "claimed by another run"
        return out
    out.status = "sent"
    out.mail_error = _email("reminder", sub.Email, f"Upcoming payment: {sub.ProductName or sub.SKU} on {payment:%d %b %Y}", {
        **_sub_context(sub), "payment_date": payment,
    })
    return out


# --- runs ------------------------------------------------------------------------------


def dates_to_cover(kind: str, run_date: date, catch_up_days: int) -> list[date]:
    """``run_date`` and, before it, every date since the last completed run's last date
    (at most ``catch_up_days`` back). No completed run yet: ``run_date`` alone."""
    last = access.last_completed_run(kind) if catch_up_days > 0 else None
    first = run_date
    if last is not None:
        after_last = date.fromisoformat(last.LastDate) + timedelta(days=1)
        first = min(run_date, max(after_last, run_date - timedelta(days=catch_up_days)))
    return [first + timedelta(days=n) for n in range((run_date - first).days + 1)]


def _describe(error: BaseException) -> str:
    from .errors import DYNAMODB_ERRORS, describe_dynamodb_error

    if isinstance(error, DYNAMODB_ERRORS):
        return describe_dynamodb_error(error)
    return f"{type(error).__name__}: {error}".splitlines()[0]


def _run(
    kind: str,
    dates: list[date],
    find: Callable[[date], Iterable[Subscription]],
    act: Callable[[Subscription, date], Any],
    *,
    workers: int,
    dry_run: bool,
    stop: threading.Event | None,
    on_item: Callable[[Any], None] | None,
) -> RunSummary:
    summary = RunSummary(kind, dates, dry_run=dry_run)
    stop = stop or threading.Event()
    started = time.monotonic()
    run = None if dry_run else access.start_batch_run(
        kind, first_date=dates[0], last_date=dates[-1], host=socket.gethostname())
    summary.run_id = run.RunId if run else None
    lock = threading.Lock()
    halt = threading.Event()  # the query failed: every worker stops

    def work(sub: Subscription, day: date) -> None:
        try:
            outcome = act(sub, day)
        except Exception as error:  # infrastructure or a bug: counted, the run goes on
            log.warning("%s %s on %s failed: %s", kind, sub.SK, day, _describe(error))
            outcome = (PaymentOutcome if kind == PAYMENTS else ReminderOutcome)(
                "error", sub.sub_id, sub.account_id, reason=_describe(error))
        with lock:
            _count(summary, outcome)
        if on_item:
            on_item(outcome)

    def worker(items: Iterator[Subscription], day: date, read_lock: threading.Lock) -> None:
        # Each worker takes the next item itself (the healthchecks loop): nothing is read
        # ahead, so a stop request leaves no item half done and none claimed unprocessed,
        # and no feeding thread has to win the GIL once per item.
        while not (stop.is_set() or halt.is_set()):
            with read_lock:
                try:
                    sub = next(items, None)
                except BaseException:
                    halt.set()
                    raise
            if sub is None:
                return
            work(sub, day)

    try:
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"rpay-{kind}") as pool:
            for day in dates:
                items, read_lock = iter(find(day)), threading.Lock()
                futures: list[Future] = [pool.submit(worker, items, day, read_lock) for _ in range(max(1, workers))]
                # Finish a date before the next: a declined payment may be due again
                # on a later date of this same run (its first retry).
                for future in futures:
                    future.result()
                if stop.is_set():
                    summary.interrupted = True
                    break
    except BaseException as error:
        summary.elapsed = time.monotonic() - started
        summary.counts["errors"] += 1
        summary.failures.append({"subject": f"query {kind}", "reason": _describe(error)})
        if run is not None:
            try:
                access.finish_batch_run(run, outcome="failed", counts=dict(summary.counts), failures=summary.failures)
            except Exception:  # noqa: BLE001 - the original error matters more
                log.warning("could not record the end of run %s", run.RunId)
        raise
    summary.elapsed = time.monotonic() - started
    if run is not None:
        access.finish_batch_run(run, outcome=summary.outcome, counts=dict(summary.counts), failures=summary.failures)
    return summary


def _count(summary: RunSummary, outcome: PaymentOutcome | ReminderOutcome) -> None:
    counts = summary.counts
    counts["processed"] += 1
    status = outcome.status
    counts["errors" if status == "error" else status] += 1
    if isinstance(outcome, PaymentOutcome) and outcome.is_retry and status not in ("skipped", "dry_run"):
        counts["retried"] += 1
    subject = f"{outcome.account_id}/{outcome.sub_id}"
    if status in ("error", "declined", "cancelled"):
        summary.failures.append({"subject": subject, "reason": f"{status}: {outcome.reason}"})
    if outcome.mail_error:
        counts["errors"] += 1
        counts["mail_errors"] += 1
        summary.failures.append({"subject": subject, "reason": f"{status}, but {outcome.mail_error}"})


def run_payments(
    *,
    run_date: date | None = None,
    workers: int = 8,
    dry_run: bool = False,
    catch_up_days: int = 31,
    stop: threading.Event | None = None,
    on_item: Callable[[PaymentOutcome], None] | None = None,
    gateway: PaymentGateway | None = None,
) -> RunSummary:
    """Take every payment due on ``run_date`` (default: today in ``BILLING_TIMEZONE``)
    and on any earlier date not covered by a completed run (at most ``catch_up_days``)."""
    run_date = run_date or billing_today(settings.BILLING_TIMEZONE)
    gateway = gateway or get_gateway()
    return _run(
        PAYMENTS, dates_to_cover(PAYMENTS, run_date, catch_up_days), _due_payments,
        lambda sub, day: take_payment(sub, run_date=run_date, dry_run=dry_run, gateway=gateway),
        workers=workers, dry_run=dry_run, stop=stop, on_item=on_item,
    )


def run_reminders(
    *,
    run_date: date | None = None,
    workers: int = 8,
    dry_run: bool = False,
    catch_up_days: int = 31,
    stop: threading.Event | None = None,
    on_item: Callable[[ReminderOutcome], None] | None = None,
) -> RunSummary:
    """Send every reminder due on ``run_date`` and on missed earlier dates. A missed
    reminder whose payment date has already passed is claimed but not sent."""
    run_date = run_date or billing_today(settings.BILLING_TIMEZONE)

    def act(sub: Subscription, day: date) -> ReminderOutcome:
        if day < run_date and _reminded_payment_date(sub, day) < run_date:
            return _skip_stale_reminder(sub, day, dry_run)
        return send_reminder(sub, day=day, dry_run=dry_run)

    return _run(
        REMINDERS, dates_to_cover(REMINDERS, run_date, catch_up_days), _due_reminders, act,
        workers=workers, dry_run=dry_run, stop=stop, on_item=on_item,
    )


def _skip_stale_reminder(sub: Subscription, day: date, dry_run: bool) -> ReminderOutcome:
    out = ReminderOutcome("skipped", sub.sub_id, sub.account_id, day=day, reason="payment date already passed")
    if not dry_run:
        payment = _reminded_payment_date(sub, day)
        with contextlib.suppress(access.ConditionFailed):
            access.claim_reminder(sub, day=day, next_reminder=max(_following_reminder(sub, payment), day + timedelta(days=1)))
    return out


def _due_payments(day: date) -> Iterator[Subscription]:
    return access.get_due_payments_by_date(day)


def _due_reminders(day: date) -> Iterator[Subscription]:
    return access.get_due_reminders_by_date(day)
