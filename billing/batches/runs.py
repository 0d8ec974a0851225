"""The run loop: which dates a run covers (catch-up), the worker pool over the day's index
Query, counting outcomes, and recording the run's start and end.
"""

from __future__ import annotations

import contextvars
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import date, timedelta
from functools import partial

from django.conf import settings

from billing import access
from billing.batches.outcomes import ReminderOutcome, ReminderStatus, RunSummary
from billing.batches.reconcile import reconcile as reconcile_charges
from billing.batches.reminders import (
    announce_trial_ends,
    reminded_payment_date,
    send_reminder,
    skip_stale_reminder,
)
from billing.batches.shards import ShardSet
from billing.batches.upcoming_invoices import announce_last_usage, announce_upcoming_invoices, notice_days
from billing.batches.usage_reminders import ending_entries, remind_last_usage
from billing.models import BatchKind, BatchRun, RunOutcome, Subscription
from billing.operations.expiry import expire_due
from billing.operations.final_usage import bill_ended_periods
from billing.operations.outcomes import PaymentOutcome, PaymentStatus
from billing.operations.payments import take_payment
from core.clock import billing_today
from core.dynamo.errors import DYNAMODB_ERRORS, describe_dynamodb_error, is_unavailable
from core.ops.logs import run_context
from core.payments.errors import GatewayError
from core.payments.gateway import PaymentGateway, get_gateway

log = logging.getLogger(__package__)  # "billing.batches": one logger for both batches

Outcome = PaymentOutcome | ReminderOutcome


def dates_to_cover(kind: BatchKind, run_date: date, catch_up_days: int, shards: ShardSet | None = None) -> list[date]:
    """``run_date`` and, before it, every date since the last completed run's last date
    (at most ``catch_up_days`` back). No completed run yet: the whole window, since a
    first run that looked at ``run_date`` alone would leave a date owed before it (a
    subscription made before cron was set up, or a first scheduled run that failed
    before it could record itself) unpaid for good.

    With one run per host or process, "the last completed run" is per shard:
    for each of ``shards`` (default: every shard), the latest date a completed run that
    took that shard covered; the run starts after the earliest of those, so a host whose
    run failed catches up its own shards even when the other hosts' runs completed."""
    if catch_up_days <= 0:
        return [run_date]
    members = shards.members if shards is not None else list(range(access.due_shard_layout().read_shards))
    count = shards.count if shards is not None else len(members)
    runs = access.completed_batch_runs(kind)
    latest = [max((run.LastDate for run in runs if run.covers_shard(shard, count)), default=None)
              for shard in members]
    known = [day for day in latest if day is not None]
    first = run_date - timedelta(days=catch_up_days)
    if len(known) == len(latest):
        after_last = date.fromisoformat(min(known)) + timedelta(days=1)
        first = min(run_date, max(after_last, first))
    return [first + timedelta(days=n) for n in range((run_date - first).days + 1)]


def _describe(error: BaseException) -> str:
    if isinstance(error, DYNAMODB_ERRORS):
        return describe_dynamodb_error(error)
    return f"{type(error).__name__}: {error}".splitlines()[0]


@contextmanager
def _heartbeat(run: BatchRun | None) -> Iterator[None]:
    """Renew the run's lease every third of it while the block runs, so a run that dies
    without recording its end (SIGKILL, an outage) shows as abandoned once it passes."""
    if run is None:
        yield
        return
    done = threading.Event()

    def beat() -> None:
        while not done.wait(access.RUN_LEASE.total_seconds() / 3):
            try:
                access.renew_batch_run(run)
            except access.ConditionFailed:
                return  # the record says the run has ended
            except Exception as error:  # noqa: BLE001 - the run itself will meet the outage
                log.warning("could not renew the lease of run %s: %s", run.RunId, _describe(error))

    thread = threading.Thread(target=beat, name=f"rpay-heartbeat-{run.RunId}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)


def _run(
    kind: BatchKind,
    dates: list[date],
    find: Callable[[date], Iterable[Subscription]],
    act: Callable[[Subscription, date], Outcome],
    failed: Callable[[Subscription, str], Outcome],
    *,
    workers: int,
    dry_run: bool,
    stop: threading.Event | None,
    on_item: Callable[[Outcome], None] | None,
    on_total: Callable[[int], None] | None = None,
    count: Callable[[date], int] | None = None,
    shards: ShardSet | None = None,
    before_finish: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    summary = RunSummary(kind, dates, dry_run=dry_run, shards=str(shards) if shards else None)
    stop = stop or threading.Event()
    started = time.monotonic()
    # One record per run, i.e. per process: it says which shards it took (none: all).
    run = None if dry_run else access.start_batch_run(
        kind, first_date=dates[0], last_date=dates[-1], host=socket.gethostname(),
        shards=(shards.first, shards.last, shards.count) if shards else None)
    summary.run_id = run.RunId if run else None
    lock = threading.Lock()
    halt = threading.Event()  # the query failed: every worker stops

    def work(sub: Subscription, day: date) -> None:
        try:
            outcome = act(sub, day)
        except Exception as error:  # infrastructure or a bug: counted, the run goes on
            # A bug (neither the engine nor the processor out of reach) is logged with its
            # traceback: the one line says what failed, the traceback where.
            bug = not (is_unavailable(error) or isinstance(error, GatewayError))
            log.warning("%s %s on %s failed: %s", kind, sub.SK, day, _describe(error), exc_info=bug,
                        extra={"kind": str(kind), "item": f"{sub.account_id}/{sub.sub_id}", "outcome": "error"})
            outcome = failed(sub, _describe(error))
            if is_unavailable(error) and not halt.is_set():
                # The engine cannot record what is done (M2): take no new item, so an
                # outage leaves at most the items in flight (one per worker) unrecorded.
                summary.halted = _describe(error)
                halt.set()
        log.debug("%s", outcome.line(), extra={"kind": str(kind), "item": f"{outcome.account_id}/{outcome.sub_id}",
                                               "outcome": str(outcome.status)})
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
        with run_context(summary.run_id), _heartbeat(run), ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=f"rpay-{kind}") as pool:
            for day in dates:
                if on_total and count:
                    on_total(count(day))  # one COUNT query, only when someone shows a total
                items, read_lock = iter(find(day)), threading.Lock()
                # Each worker runs in a copy of this context: its log lines carry the run id.
                futures: list[Future] = [pool.submit(contextvars.copy_context().run, worker, items, day, read_lock)
                                         for _ in range(max(1, workers))]
                # Finish a date before the next: a declined payment may be due again
                # on a later date of this same run (its first retry).
                for future in futures:
                    future.result()
                if summary.halted:
                    break
                if stop.is_set():
                    summary.interrupted = True
                    break
            if before_finish and not summary.halted and not summary.interrupted:
                before_finish(summary)
    except BaseException as error:
        summary.elapsed = time.monotonic() - started
        summary.counts["errors"] += 1
        summary.failures.append({"subject": f"query {kind}", "reason": _describe(error)})
        if run is not None:
            try:
                access.finish_batch_run(run, outcome=RunOutcome.FAILED, counts=dict(summary.counts), failures=summary.failures)
            except Exception:  # noqa: BLE001 - the original error matters more
                log.warning("could not record the end of run %s", run.RunId)
        raise
    summary.elapsed = time.monotonic() - started
    if run is not None:
        try:
            access.finish_batch_run(run, outcome=summary.outcome, counts=dict(summary.counts), failures=summary.failures)
        except Exception as error:
            if not summary.halted:
                raise
            # The engine that stopped the run cannot record its end either: the lease runs
            # out and the next run reports it abandoned and takes its dates over.
            log.warning("could not record the end of run %s: %s", run.RunId, _describe(error))
    return summary


def _count(summary: RunSummary, outcome: Outcome) -> None:
    counts = summary.counts
    counts["processed"] += 1
    status = outcome.status
    counts["errors" if status == PaymentStatus.ERROR else str(status)] += 1
    if isinstance(outcome, PaymentOutcome) and outcome.is_retry and status not in (
            PaymentStatus.SKIPPED, PaymentStatus.DRY_RUN):
        counts["retried"] += 1
    if isinstance(outcome, PaymentOutcome):
        # For the metrics (core/ops/metrics.py): amounts charged by currency, gateway time.
        if status == PaymentStatus.PAID and outcome.amount and outcome.currency:
            counts[f"charged:{outcome.currency}"] += outcome.amount
        if outcome.gateway_ms is not None:
            counts["gateway_calls"] += 1
            counts["gateway_ms"] += round(outcome.gateway_ms)
    if status in (PaymentStatus.ERROR, PaymentStatus.DECLINED, PaymentStatus.CANCELLED, PaymentStatus.ACTION_REQUIRED):
        summary.failures.append({"subject": f"{outcome.account_id}/{outcome.sub_id}",
                                 "reason": f"{status}: {outcome.reason}"})
    _count_mail_error(summary, outcome)


def _count_mail_error(summary: RunSummary, outcome: Outcome) -> None:
    """An e-mail the outcome's step could not send: an error of the run, with its reason."""
    if outcome.mail_error:
        summary.counts["errors"] += 1
        summary.counts["mail_errors"] += 1
        summary.failures.append({"subject": f"{outcome.account_id}/{outcome.sub_id}",
                                 "reason": f"{outcome.status}, but {outcome.mail_error}"})


def run_payments(
    *,
    run_date: date | None = None,
    workers: int = 8,
    dry_run: bool = False,
    catch_up_days: int = 31,
    stop: threading.Event | None = None,
    on_item: Callable[[PaymentOutcome], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    gateway: PaymentGateway | None = None,
    shards: ShardSet | None = None,
    reconcile: bool = True,
    reconcile_days: int | None = None,
) -> RunSummary:
    """Take every payment due on ``run_date`` (default: today in ``BILLING_TIMEZONE``)
    and on any earlier date not covered by a completed run (at most ``catch_up_days``);
    only the items of ``shards`` (default: every shard). Then, unless told not to
    (``reconcile``), reconcile the gateway's charges made from the run's first date less
    ``reconcile_days`` (default ``settings.RECONCILE_DAYS``) to today against the
    receipts, fixing what it can (``reconcile_own_days``)."""
    run_date = run_date or billing_today(settings.BILLING_TIMEZONE)
    gateway = gateway or get_gateway()
    members = shards.members if shards else None
    # The run's receipt numbers: each worker keeps a series of its own and remembers where
    # it stands, so a payment's number costs no request of its own (receipt_numbers).
    numbers = access.ReceiptNumbers()
    # The seller's tax profile, read once per run: no request of its own per payment.
    seller = access.invoice_seller()
    dates = dates_to_cover(BatchKind.PAYMENTS, run_date, catch_up_days, shards)
    days = settings.RECONCILE_DAYS if reconcile_days is None else reconcile_days
    recorded: set[str] = set()  # the charges this run recorded: their receipts are not read again
    retried: set[str] = set()  # subscriptions whose payment failed here: the next run retries them

    def pay(sub: Subscription, day: date) -> PaymentOutcome:
        outcome = take_payment(sub, run_date=run_date, dry_run=dry_run, gateway=gateway, numbers=numbers,
                               seller=seller)
        if outcome.status == PaymentStatus.PAID and outcome.charge_id:
            recorded.add(outcome.charge_id)
        return outcome

    def failed(sub: Subscription, why: str) -> PaymentOutcome:
        retried.add(sub.sub_id)
        return PaymentOutcome(PaymentStatus.ERROR, sub.sub_id, sub.account_id, reason=why)

    def finish(summary: RunSummary) -> None:
        # Incomplete first payments past their deadline expire first, so that a charge the
        # processor took anyway is refunded by the reconciliation just after (never kept).
        expire_own(summary, gateway=gateway, shards=shards)
        bill_ended_usage(summary, run_date, gateway=gateway, shards=shards)
        if reconcile:
            reconcile_own_days(summary, dates[0] - timedelta(days=days), run_date, gateway=gateway, shards=shards,
                               recorded=recorded, retried=retried)

    return _run(
        BatchKind.PAYMENTS, dates,
        partial(access.get_due_payments_by_date, shards=members),
        pay, failed,
        workers=workers, dry_run=dry_run, stop=stop, on_item=on_item,
        on_total=on_total, count=partial(access.count_due_payments_by_date, shards=members), shards=shards,
        before_finish=None if dry_run else finish,
    )


def expire_own(summary: RunSummary, *, gateway: PaymentGateway, shards: ShardSet | None) -> None:
    """The run's expiry of incomplete subscriptions (billing/operations/expiry.py), of its own
    shards; how many in the summary's ``expired`` count."""
    summary.counts["expired"] += expire_due(gateway=gateway, takes=_own(shards))


def _own(shards: ShardSet | None) -> Callable[[str], bool] | None:
    """Whether a subscription is of the run's own shards (None: every one is)."""
    if shards is None or shards.is_every:
        return None
    members = set(shards.members)
    return lambda sub_id: access.shard_of(sub_id, shards.count) in members


def bill_ended_usage(summary: RunSummary, today: date, *, gateway: PaymentGateway, shards: ShardSet | None) -> None:
    """The usage of the last period of subscriptions cancelled at its end, due by ``today``
    (billing/operations/final_usage.py), of the run's own shards; how many were charged and
    declined in the summary's ``usage_billed`` and ``usage_declined`` counts (before the
    reconciliation, which then finds their charges recorded)."""
    summary.counts.update(bill_ended_periods(today, gateway=gateway, takes=_own(shards)))


def reconcile_own_days(summary: RunSummary, first: date, today: date, *, gateway: PaymentGateway,
                       shards: ShardSet | None, recorded: set[str] | frozenset[str] = frozenset(),
                       retried: set[str] | frozenset[str] = frozenset()) -> None:
    """The payment run's janitor (docs/MONEY.md M2): the charges created from ``first`` to
    ``today`` of the run's own shards against their receipts, fixed as
    ``reconcile_payments --fix`` fixes them; what cannot be fixed is kept in the summary
    (``differences``) and makes the command exit 1. Its cost: one gateway list and one
    GetItem per charge this run did not record itself (so each charge is read once by
    each of the next ``RECONCILE_DAYS`` runs), plus the writes of each fix. The charges
    of a subscription whose payment failed in this run are left to the next run."""
    members = set(shards.members) if shards is not None and not shards.is_every else None

    def takes(sub_id: str) -> bool:
        # The run's own shards; not a subscription whose payment just failed here (the
        # next run retries it, recording its charge if there was one).
        return sub_id not in retried and (members is None or access.shard_of(sub_id, shards.count) in members)
    checked, differences = reconcile_charges(first, today, fix=True, today=today, gateway=gateway, reverse=False,
                                             takes=takes, recorded=recorded)
    summary.counts["reconciled"] += sum(d.fixed for d in differences)
    summary.counts["differences"] += sum(not d.fixed for d in differences)
    summary.reconciled_charges = checked
    for difference in differences:
        (log.info if difference.fixed else log.warning)("reconcile: %s", difference.line())
        if not difference.fixed:
            summary.differences.append(difference.line())
            summary.failures.append({"subject": "reconcile", "reason": difference.line()})


def run_reminders(
    *,
    run_date: date | None = None,
    workers: int = 8,
    dry_run: bool = False,
    catch_up_days: int = 31,
    stop: threading.Event | None = None,
    on_item: Callable[[ReminderOutcome], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    shards: ShardSet | None = None,
) -> RunSummary:
    """Send every reminder due on ``run_date`` and on missed earlier dates (the items of
    ``shards``, default every shard). A missed reminder whose payment date has already
    passed is claimed but not sent."""
    run_date = run_date or billing_today(settings.BILLING_TIMEZONE)
    members = shards.members if shards else None
    seller = access.seller_tax()  # read once per run: the reminders' amounts are taxed by it

    def act(sub: Subscription, day: date) -> ReminderOutcome:
        if day < run_date and reminded_payment_date(sub, day) < run_date:
            return skip_stale_reminder(sub, day, dry_run)
        return send_reminder(sub, day=day, dry_run=dry_run, seller=seller)

    def trials_and_last_charges(summary: RunSummary) -> None:
        if dry_run:
            return
        # The merchant's subscription.trial_will_end, for each date the run covered.
        for day in summary.dates:
            if written := announce_trial_ends(day, shards=members):  # counted only when there are
                summary.counts["trial_will_end"] += written
        # The last usage charges of subscriptions ending at their period's end: those due to
        # be reminded by today, missed days' included.
        ending = ending_entries(run_date)
        for outcome in remind_last_usage(run_date, ending, takes=_own(shards), seller=seller):
            summary.counts["last_usage_reminded"] += 1
            _count_mail_error(summary, outcome)
        # The merchant's invoice.upcoming, for each date covered whose payment is still to come.
        written = sum(announce_upcoming_invoices(day, shards=members, seller=seller) for day in summary.dates
                      if day + timedelta(days=notice_days()) >= run_date)
        written += announce_last_usage(run_date, ending, takes=_own(shards), seller=seller)
        if written:  # counted only when there are
            summary.counts["invoice_upcoming"] += written

    return _run(
        BatchKind.REMINDERS, dates_to_cover(BatchKind.REMINDERS, run_date, catch_up_days, shards),
        partial(access.get_due_reminders_by_date, shards=members), act,
        lambda sub, why: ReminderOutcome(ReminderStatus.ERROR, sub.sub_id, sub.account_id, reason=why),
        workers=workers, dry_run=dry_run, stop=stop, on_item=on_item,
        on_total=on_total, count=partial(access.count_due_reminders_by_date, shards=members), shards=shards,
        before_finish=trials_and_last_charges,
    )
