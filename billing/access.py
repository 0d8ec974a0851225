"""The named access patterns of DESIGN.md §3: the only code that reads or writes items.

Views, forms, commands and batches call these functions; they never build keys or
touch PynamoDB models for queries themselves. Every function here is a Query,
GetItem, PutItem or UpdateItem: nothing scans the table.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from pynamodb.exceptions import DoesNotExist, PutError, UpdateError
from pynamodb.expressions.condition import Condition

from .gateway import CardToken
from .models import (
    Account,
    AuditEvent,
    BatchRun,
    BillingItem,
    PaymentDetails,
    Product,
    ProductStatus,
    Receipt,
    ReceiptStatus,
    Subscription,
    SubscriptionStatus,
    UserLink,
)
from .schedule import rescheduled_payment_date, start_dates


class AlreadyExists(Exception):
    """A conditional put found the item already there."""


class ConditionFailed(Exception):
    """A conditional update found the item changed (or gone) since it was read."""


class PaymentInProgress(ConditionFailed):
    """The subscription's payment is due today or still pending: its schedule can't move
    until that payment has been taken (or the batch could charge the period twice)."""


def new_id() -> str:
    """A random, URL-safe identifier: never derived from an e-mail or a counter."""
    return secrets.token_hex(8)


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def iso_now() -> str:
    return utc_now().isoformat(timespec="seconds")


def _is_conditional_failure(error: Exception) -> bool:
    return getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException"


# --- accounts --------------------------------------------------------------------------


def create_account(email: str, *, user_id: int | None = None, name: str = "") -> Account:
    """A new account with a random id, and its link to the Django user if given."""
    account_id = new_id()
    account = Account(
        Account.pk(account_id=account_id),
        Account.sk(account_id=account_id),
        Email=email,
        Name=name or None,
        UserId=user_id,
        CreatedDate=iso_now(),
    )
    account.save(condition=Account.PK.does_not_exist())
    if user_id is not None:
        link_user(user_id, account_id, email)
    return account


def link_user(user_id: int, account_id: str, email: str) -> UserLink:
    link = UserLink(
        UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id),
        AccountId=account_id, Email=email,
    )
    link.save()
    return link


def get_account(account_id: str) -> Account | None:
    try:
        return Account.get(Account.pk(account_id=account_id), Account.sk(account_id=account_id))
    except DoesNotExist:
        return None


def get_account_id_for_user(user_id: int) -> str | None:
    try:
        link = UserLink.get(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id))
    except DoesNotExist:
        return None
    return link.AccountId


@dataclass
class AccountCollection:
    """An account's whole item collection, read with one Query (the dashboard)."""

    account: Account | None = None
    subscriptions: list[Subscription] = field(default_factory=list)
    receipts: list[Receipt] = field(default_factory=list)
    events: list[AuditEvent] = field(default_factory=list)

    @property
    def live_subscriptions(self) -> list[Subscription]:
        return [s for s in self.subscriptions if s.is_live]


def get_account_collection(account_id: str, *, now: datetime | None = None) -> AccountCollection:
    """Account, subscriptions, unexpired receipts and events in one Query of the partition."""
    now = now or utc_now()
    collection = AccountCollection()
    for item in BillingItem.query(Account.pk(account_id=account_id)):
        if isinstance(item, Account):
            collection.account = item
        elif isinstance(item, Subscription):
            collection.subscriptions.append(item)
        elif isinstance(item, Receipt):
            if not _expired(item, now):
                collection.receipts.append(item)
        elif isinstance(item, AuditEvent):
            collection.events.append(item)
    collection.receipts.reverse()  # newest first: SKs sort by billing date
    collection.events.reverse()
    return collection


# --- subscriptions ---------------------------------------------------------------------


def payment_details_from(card: CardToken, billing_address: str | None = None) -> PaymentDetails:
    return PaymentDetails(
        Token=card.token, Brand=card.brand, Last4=card.last4,
        ExpMonth=card.exp_month, ExpYear=card.exp_year, BillingAddress=billing_address,
    )


def create_subscription(
    account: Account,
    *,
    sku: str,
    payment_day: int,
    amount: int,
    currency: str,
    card: CardToken,
    today: date,
    reminder_days_before: int,
    product_name: str | None = None,
    billing_address: str | None = None,
) -> Subscription:
    """PutItem, only if absent. The new item carries all four GSI keys (the ``Last*``
    ones at the creation date), so it is found on its first reminder and payment date.
    """
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    first_payment, first_reminder = start_dates(payment_day, today, reminder_days_before)
    sub_id = new_id()
    sub = Subscription(
        account.PK,
        Subscription.sk(sub_id=sub_id, sku=sku),
        Email=account.Email,
        SKU=sku,
        ProductName=product_name,
        PaymentDay=payment_day,
        PaymentAmount=amount,
        Currency=currency.upper(),
        NextPaymentDate=first_payment.isoformat(),
        LastPaymentDate=today.isoformat(),
        NextReminderDate=first_reminder.isoformat(),
        LastReminderDate=today.isoformat(),
        PaymentDetails=payment_details_from(card, billing_address),
        CreatedDate=iso_now(),
        Status=SubscriptionStatus.ACTIVE,
    )
    try:
        sub.save(condition=Subscription.SK.does_not_exist())
    except PutError as error:
        if _is_conditional_failure(error):
            raise AlreadyExists(sub.SK) from error
        raise
    return sub


def get_subscription(account_id: str, sub_id: str, sku: str | None = None) -> Subscription | None:
    """GetItem when the SKU is known; otherwise one Query on the ``SUB#<SubId>#`` prefix
    (the SKU is part of the sort key, and URLs carry only the subscription id).
    """
    pk = Subscription.pk(account_id=account_id)
    if sku is not None:
        try:
            return Subscription.get(pk, Subscription.sk(sub_id=sub_id, sku=sku), consistent_read=True)
        except DoesNotExist:
            return None
    if "#" in sub_id:
        return None
    prefix = Subscription.sk_template.format(sub_id=sub_id, sku="")
    for sub in Subscription.query(pk, Subscription.SK.startswith(prefix), consistent_read=True):
        return sub
    return None


def get_subscriptions_by_account(account_id: str) -> list[Subscription]:
    """Query base table, ``begins_with(SK, "SUB#")``: never receipts or other accounts'."""
    return list(
        Subscription.query(
            Subscription.pk(account_id=account_id),
            Subscription.SK.startswith(Subscription.sk_template.prefix),
        )
    )


def update_subscription(
    sub: Subscription,
    actions: list,
    condition: Condition | None = None,
    *,
    check_version: bool = True,
) -> Subscription:
    """UpdateItem with a condition; raises ConditionFailed when it does not hold.

    ``check_version`` adds PynamoDB's optimistic-locking check on ``Version`` (the
    portal's read-modify-write); batches pass their own business condition instead.
    """
    try:
        sub.update(actions=actions, condition=condition, add_version_condition=check_version)
    except UpdateError as error:
        if _is_conditional_failure(error):
            raise ConditionFailed(sub.SK) from error
        raise
    return sub


def _live() -> Condition:
    return Subscription.Status.is_in(*SubscriptionStatus.LIVE)


def change_payment_day(sub: Subscription, new_day: int, *, today: date, reminder_days_before: int) -> Subscription:
    """Move the schedule to a new anchor day without charging any month twice.

    Refused (``PaymentInProgress``) while a payment is due today or overdue: the payment
    run may be charging it right now under the old date's idempotency key, and moving
    the date would let the new date charge the same period again. The condition makes
    that hold even against a run that starts between our read and our write.
    """
    if date.fromisoformat(sub.NextPaymentDate) <= today:
        raise PaymentInProgress(sub.SK)
    unpaid = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    next_payment = rescheduled_payment_date(new_day, unpaid, today)
    remind = max(next_payment - timedelta(days=reminder_days_before), min(today + timedelta(days=1), next_payment))
    return update_subscription(
        sub,
        [
            Subscription.PaymentDay.set(new_day),
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.NextReminderDate.set(remind.isoformat()),
            # A changed day ends any retry sequence: the new date is a fresh attempt.
            Subscription.BillingPeriod.remove(),
            Subscription.RetryCount.set(0),
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
        ],
        _live() & (Subscription.NextPaymentDate > today.isoformat()),
    )


def set_schedule(
    sub: Subscription,
    *,
    next_payment: date,
    last_payment: date,
    next_reminder: date,
    last_reminder: date,
) -> Subscription:
    """Overwrite all four schedule dates (demo seeding and staff repairs)."""
    return update_subscription(
        sub,
        [
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.LastPaymentDate.set(last_payment.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
            Subscription.LastReminderDate.set(last_reminder.isoformat()),
        ],
        _live(),
    )


def replace_card(sub: Subscription, card: CardToken, billing_address: str | None = None) -> Subscription:
    return update_subscription(
        sub, [Subscription.PaymentDetails.set(payment_details_from(card, billing_address))], _live()
    )


def cancel_subscription(sub: Subscription, *, reason: str = "customer", check_version: bool = True) -> Subscription:
    """No further charges: the ``Next*`` keys go, so the item leaves both indexes at once."""
    return update_subscription(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.CANCELLED),
            Subscription.CancelledDate.set(iso_now()),
            Subscription.CancelReason.set(reason),
            Subscription.NextPaymentDate.remove(),
            Subscription.NextReminderDate.remove(),
        ],
        _live(),
        check_version=check_version,
    )


# --- the two batch indexes -------------------------------------------------------------


def get_due_reminders_by_date(day: date, *, page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-1, ``NextReminderDate = day``: every subscription to remind that day."""
    return Subscription.due_reminders.query(day.isoformat(), page_size=page_size)


def get_due_payments_by_date(day: date, *, page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-2, ``NextPaymentDate = day``: every subscription to charge that day."""
    return Subscription.due_payments.query(day.isoformat(), page_size=page_size)


# --- receipts --------------------------------------------------------------------------


def receipt_ttl(billing_date: date, retention_days: int) -> datetime:
    return datetime(billing_date.year, billing_date.month, billing_date.day, tzinfo=UTC) + timedelta(
        days=retention_days
    )


def create_receipt(
    sub: Subscription,
    *,
    billing_date: date,
    amount: int,
    currency: str,
    charge_id: str | None,
    retention_days: int,
    processed_at: datetime | None = None,
) -> tuple[Receipt, bool]:
    """PutItem only if absent. The key is deterministic (billing date, SKU, SubId), so a
    retried payment finds the first receipt; returns (receipt, created).
    """
    receipt = Receipt(
        sub.PK,
        Receipt.sk(billing_date=billing_date.isoformat(), sku=sub.SKU, sub_id=sub.sub_id),
        SubId=sub.sub_id,
        SKU=sub.SKU,
        ProductName=sub.ProductName,
        Email=sub.Email,
        BillingDate=billing_date.isoformat(),
        ProcessedDate=(processed_at or utc_now()).isoformat(timespec="seconds"),
        ProcessedAmount=amount,
        Currency=currency,
        ChargeId=charge_id,
        CardBrand=sub.PaymentDetails.Brand if sub.PaymentDetails else None,
        CardLast4=sub.PaymentDetails.Last4 if sub.PaymentDetails else None,
        TTL=receipt_ttl(billing_date, retention_days),
    )
    try:
        receipt.save(condition=Receipt.SK.does_not_exist())
    except PutError as error:
        if _is_conditional_failure(error):
            return receipt, False
        raise
    return receipt, True


def _expired(receipt: Receipt, now: datetime) -> bool:
    # DynamoDB deletes expired items lazily (up to days later): hide them ourselves.
    return receipt.TTL is not None and now >= receipt.TTL


def get_receipts_by_account(
    account_id: str, start: date, end: date, *, now: datetime | None = None
) -> list[Receipt]:
    """Query base table, ``SK between REC#<start> and REC#<end>~``, newest first,
    without receipts whose TTL has passed."""
    now = now or utc_now()
    prefix = Receipt.sk_template.prefix
    receipts = Receipt.query(
        Receipt.pk(account_id=account_id),
        Receipt.SK.between(f"{prefix}{start.isoformat()}", f"{prefix}{end.isoformat()}~"),
        filter_condition=Receipt.TTL.does_not_exist() | (now < Receipt.TTL),
        scan_index_forward=False,
    )
    return [r for r in receipts if not _expired(r, now)]


def get_receipt(account_id: str, receipt_sk: str) -> Receipt | None:
    if not receipt_sk.startswith(Receipt.sk_template.prefix):
        return None
    try:
        return Receipt.get(Receipt.pk(account_id=account_id), receipt_sk)
    except DoesNotExist:
        return None


# --- the product catalogue -------------------------------------------------------------


def list_products(*, include_retired: bool = False) -> list[Product]:
    products = Product.query(Product.pk())
    return [p for p in products if include_retired or p.Status == ProductStatus.ACTIVE]


def get_product(sku: str) -> Product | None:
    try:
        return Product.get(Product.pk(), Product.sk(sku=sku))
    except (DoesNotExist, ValueError):
        return None


def create_product(sku: str, name: str, amount: int, currency: str, description: str = "") -> Product:
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    product = Product(
        Product.pk(), Product.sk(sku=sku), SKU=sku, Name=name, Description=description or None,
        PaymentAmount=amount, Currency=currency.upper(), CreatedDate=iso_now(),
    )
    try:
        product.save(condition=Product.SK.does_not_exist())
    except PutError as error:
        if _is_conditional_failure(error):
            raise AlreadyExists(sku) from error
        raise
    return product


# --- batch runs (written by billing.batches) -----------------------------------------


def list_batch_runs(kind: str, *, limit: int = 50) -> list[BatchRun]:
    """The newest runs of one batch (``payments`` or ``reminders``), newest first: one Query."""
    return list(BatchRun.query(BatchRun.pk(kind=kind), scan_index_forward=False, limit=limit))


# --- audit events ----------------------------------------------------------------------


def record_event(
    account_id: str,
    *,
    actor: str,
    action: str,
    subject: str | None = None,
    before: dict | None = None,
    after: dict | None = None,
    note: str | None = None,
) -> AuditEvent:
    at = iso_now()
    event = AuditEvent(
        AuditEvent.pk(account_id=account_id),
        AuditEvent.sk(at=at, event_id=new_id()),
        At=at, Actor=actor, Action=action, Subject=subject, Before=before, After=after, Note=note,
    )
    event.save()
    return event


def get_events_by_account(account_id: str, *, limit: int = 100) -> list[AuditEvent]:
    return list(
        AuditEvent.query(
            AuditEvent.pk(account_id=account_id),
            AuditEvent.SK.startswith(AuditEvent.sk_template.prefix),
            scan_index_forward=False,
            limit=limit,
        )
    )


def subscription_snapshot(sub: Subscription) -> dict:
    """The fields staff and customers care about, for audit before/after records."""
    return {
        "Status": sub.Status,
        "PaymentDay": sub.PaymentDay,
        "PaymentAmount": sub.PaymentAmount,
        "Currency": sub.Currency,
        "NextPaymentDate": sub.NextPaymentDate,
        "NextReminderDate": sub.NextReminderDate,
        "Card": f"{sub.PaymentDetails.Brand} ****{sub.PaymentDetails.Last4}" if sub.PaymentDetails else None,
    }


def batch_items(items: Iterable[BillingItem]) -> None:
    """Write many items at once (demo seeding, benchmarks): BatchWriteItem."""
    with BillingItem.batch_write() as batch:
        for item in items:
            batch.save(item)


@dataclass
class TableOverview:
    products: int = 0
    accounts: int = 0
    subscriptions: int = 0
    live_subscriptions: int = 0
    receipts: int = 0
    rows: list[dict] = field(default_factory=list)


def table_overview(user_ids: Iterable[int]) -> TableOverview:
    """Counts for the given users' accounts: one GetItem + one Query per account (no Scan)."""
    overview = TableOverview(products=len(list_products(include_retired=True)))
    for user_id in user_ids:
        account_id = get_account_id_for_user(user_id)
        if not account_id:
            continue
        collection = get_account_collection(account_id)
        overview.accounts += 1
        overview.subscriptions += len(collection.subscriptions)
        overview.live_subscriptions += len(collection.live_subscriptions)
        overview.receipts += len(collection.receipts)
        overview.rows.append({
            "account_id": account_id,
            "email": collection.account.Email if collection.account else "",
            "subscriptions": len(collection.subscriptions),
            "receipts": len(collection.receipts),
        })
    return overview


# --- portal ---


def get_unexpired_receipt(account_id: str, receipt_sk: str, *, now: datetime | None = None) -> Receipt | None:
    """``get_receipt`` without receipts whose TTL has passed (DynamoDB deletes them lazily,
    and the customer must not see a receipt the list no longer shows): one GetItem."""
    receipt = get_receipt(account_id, receipt_sk)
    if receipt is None or _expired(receipt, now or utc_now()):
        return None
    return receipt


# --- staff ---------------------------------------------------------------------------


def update_product(
    sku: str, *, name: str, amount: int, currency: str, description: str = ""
) -> Product:
    """UpdateItem on an existing catalogue entry. Existing subscriptions keep the price
    they signed up for: it is copied onto each subscription, never read back from here."""
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    product = Product(Product.pk(), Product.sk(sku=sku))
    actions = [
        Product.Name.set(name),
        Product.PaymentAmount.set(amount),
        Product.Currency.set(currency.upper()),
        Product.Description.set(description) if description else Product.Description.remove(),
    ]
    try:
        product.update(actions=actions, condition=Product.SK.exists())
    except UpdateError as error:
        if _is_conditional_failure(error):
            raise ConditionFailed(sku) from error
        raise
    return product


def retire_product(sku: str) -> Product:
    """No new subscriptions (``list_products`` hides it); existing ones are untouched."""
    product = Product(Product.pk(), Product.sk(sku=sku))
    try:
        product.update(actions=[Product.Status.set(ProductStatus.RETIRED)], condition=Product.SK.exists())
    except UpdateError as error:
        if _is_conditional_failure(error):
            raise ConditionFailed(sku) from error
        raise
    return product


def record_refund(receipt: Receipt, *, refund_id: str, amount: int) -> Receipt:
    """Mark a receipt refunded after the gateway refunded ``amount`` minor units of it.

    The condition on ``RefundedAmount`` refuses a write based on a stale read, so two
    staff members refunding at once cannot both add to the total.
    """
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    before = receipt.RefundedAmount or 0
    total = before + amount
    if total > receipt.ProcessedAmount:
        raise ValueError("refund exceeds the amount charged")
    status = ReceiptStatus.REFUNDED if total == receipt.ProcessedAmount else ReceiptStatus.PARTIALLY_REFUNDED
    unchanged = Receipt.RefundedAmount == before
    if before == 0:
        unchanged = unchanged | Receipt.RefundedAmount.does_not_exist()
    try:
        receipt.update(
            actions=[
                Receipt.RefundedAmount.set(total),
                Receipt.RefundId.set(refund_id),
                Receipt.Status.set(status),
            ],
            condition=Receipt.SK.exists() & unchanged,
        )
    except UpdateError as error:
        if _is_conditional_failure(error):
            raise ConditionFailed(receipt.SK) from error
        raise
    return receipt


def receipt_snapshot(receipt: Receipt) -> dict:
    """The receipt fields a refund changes, for audit before/after records."""
    return {
        "BillingDate": receipt.BillingDate,
        "ProcessedAmount": receipt.ProcessedAmount,
        "Currency": receipt.Currency,
        "Status": receipt.Status,
        "RefundedAmount": receipt.RefundedAmount or 0,
        "RefundId": receipt.RefundId,
    }


@dataclass
class UpcomingDay:
    """What the batches will do on one day: payments due (count, totals) and reminders."""

    day: date
    payments: int = 0
    totals: dict[str, int] = field(default_factory=dict)  # currency -> minor units
    reminders: int = 0


def get_upcoming(start: date, days: int = 30) -> list[UpcomingDay]:
    """Per day from ``start``: one Query of GSI-2 (amounts are needed, so items are read)
    and one ``Select=COUNT`` Query of GSI-1 (only the number of reminders is shown)."""
    upcoming = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        entry = UpcomingDay(day=day)
        for sub in get_due_payments_by_date(day):
            entry.payments += 1
            entry.totals[sub.Currency] = entry.totals.get(sub.Currency, 0) + sub.PaymentAmount
        entry.reminders = Subscription.due_reminders.count(day.isoformat())
        upcoming.append(entry)
    return upcoming


# --- batches ---------------------------------------------------------------------------
# Writes made by billing.batches. Each is one conditional UpdateItem (or PutItem): the
# condition is what makes a batch safe to re-run and to run twice at once.


def _still_due(sub: Subscription, slot: date) -> Condition:
    return (Subscription.NextPaymentDate == slot.isoformat()) & _live()


def advance_after_payment(
    sub: Subscription, *, slot: date, paid_period: date, next_payment: date, next_reminder: date
) -> Subscription:
    """After a successful charge: move to the next anchor date, back to active.

    Only if ``NextPaymentDate`` still equals ``slot`` (the date being processed), so
    that of two runs racing on one item exactly one advances it (ConditionFailed for
    the other). The version is incremented but not checked.
    """
    return update_subscription(
        sub,
        [
            Subscription.NextPaymentDate.set(next_payment.isoformat()),
            Subscription.LastPaymentDate.set(paid_period.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
            Subscription.Status.set(SubscriptionStatus.ACTIVE),
            Subscription.BillingPeriod.remove(),
            Subscription.RetryCount.set(0),
        ],
        _still_due(sub, slot),
        check_version=False,
    )


def mark_past_due(
    sub: Subscription, *, slot: date, period: date, failed_retries: int, retry_on: date, next_reminder: date
) -> Subscription:
    """After a declined charge: past due, retried on ``retry_on``; ``BillingPeriod``
    remembers the period being paid. Same condition as :func:`advance_after_payment`."""
    return update_subscription(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.PAST_DUE),
            Subscription.BillingPeriod.set(period.isoformat()),
            Subscription.RetryCount.set(failed_retries),
            Subscription.NextPaymentDate.set(retry_on.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
        ],
        _still_due(sub, slot),
        check_version=False,
    )


def claim_reminder(sub: Subscription, *, day: date, next_reminder: date) -> Subscription:
    """Claim the reminder due on ``day`` before sending it: ``NextReminderDate`` moves on
    only if it still equals ``day``, so of two runs exactly one sends the e-mail."""
    return update_subscription(
        sub,
        [
            Subscription.LastReminderDate.set(day.isoformat()),
            Subscription.NextReminderDate.set(next_reminder.isoformat()),
        ],
        (Subscription.NextReminderDate == day.isoformat()) & _live(),
        check_version=False,
    )


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
