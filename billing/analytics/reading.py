"""Reading the subscriptions' histories for the revenue report: the one module of the
package that does I/O, through the access layer only.

No index lists every account, and none may be added for this (docs/ANALYTICS.md, "How it
reads"): the accounts are found through Django's users (each account is a user's), their
``USER#`` links read in BatchGetItems of 100, then each account's item collection with one
Query (paged by DynamoDB, never a Scan; several at once, ``account_collections``), and the
coupons' terms with one Query. The cost grows with the number of accounts: this is a staff
report's read, not a page's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import islice

from django.conf import settings
from django.contrib.auth import get_user_model

from billing import access
from billing.access.revenue_rollups import Scope
from billing.analytics.figures import Money
from billing.analytics.filters import scope_order, scopes_of
from billing.analytics.history import Change, CouponTerms, SubHistory, build_history
from billing.models import AuditAction, AuditEvent, Receipt, Subscription
from core.clock import billing_today

USERS_PER_READ = 100  # a BatchGetItem's limit
DISPUTES_PER_READ = 100


def account_ids() -> Iterator[str]:
    """Every account that belongs to a user, in the users' order, each once."""
    seen: set[str] = set()
    users = get_user_model().objects.order_by("pk").values_list("pk", flat=True)
    batch: list[int] = []
    for user_id in users.iterator():
        batch.append(user_id)
        if len(batch) == USERS_PER_READ:
            yield from _new(access.get_account_ids_for_users(batch), batch, seen)
            batch = []
    if batch:
        yield from _new(access.get_account_ids_for_users(batch), batch, seen)


def account_collections(ids: Iterable[str] | None = None, *,
                        workers: int | None = None) -> Iterator[tuple[str, access.AccountCollection]]:
    """Each account (``ids``, default ``account_ids()``) with its item collection, in the
    accounts' order. The collections are read by ``workers`` threads at once
    (``REVENUE_READ_WORKERS``): each is one Query whose time is the round trip, so a
    million accounts read one after another take hours and side by side a fraction of it.
    At most a window of ``workers`` × 16 collections is held at a time, whatever the
    number of accounts."""
    workers = max(1, workers or settings.REVENUE_READ_WORKERS)
    ids = iter(account_ids() if ids is None else ids)
    if workers == 1:
        for account_id in ids:
            yield account_id, access.get_account_collection(account_id)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="revenue-read") as pool:
        while window := list(islice(ids, workers * 16)):
            yield from zip(window, pool.map(access.get_account_collection, window), strict=True)


def _new(found: dict[int, str], batch: list[int], seen: set[str]) -> Iterator[str]:
    for user_id in batch:
        if (account_id := found.get(user_id)) and account_id not in seen:
            seen.add(account_id)
            yield account_id


def coupon_terms() -> dict[str, CouponTerms]:
    return {c.Code: CouponTerms(percent_off=c.PercentOff, amount_off=c.AmountOff) for c in access.list_coupons()}


def catalog_scopes() -> list[Scope]:
    """The views the catalog can have subscribers in (one Query): each product, retired ones
    too, with each of its prices' interval and currency (archived ones too; a product's own
    price is monthly, in its currency), alone and together. A rebuild split over processes
    keeps these in every part, so that each of them has every part's months whether or not
    the part's customers were ever in it."""
    products, prices = access.list_products_with_prices(include_inactive=True)
    found: set[Scope] = set()
    for product in products:
        terms = {("month", product.Currency.upper())} | {
            (price.Interval, price.Currency.upper()) for price in prices.get(product.SKU, ())}
        for interval, currency in terms:
            found.update(scopes_of(product.SKU, interval, currency))
    return sorted(found, key=scope_order)


def day_of(stamp: str, timezone: str) -> date:
    """The billing day of a stored UTC timestamp (or of a bare date)."""
    if "T" not in stamp:
        return date.fromisoformat(stamp[:10])
    return billing_today(timezone, datetime.fromisoformat(stamp))


def _change(event: AuditEvent, timezone: str) -> Change:
    return Change(day_of(event.At, timezone), event.Action, event.Before, event.After)


def account_histories(account_id: str, coupons: dict[str, CouponTerms], timezone: str,
                      collection: access.AccountCollection | None = None) -> list[SubHistory]:
    collection = collection or access.get_account_collection(account_id)
    changes: dict[str, list[Change]] = defaultdict(list)
    # The collection holds the events newest first; a history takes them in the order they
    # were made (the last of a day is the day's state).
    for event in reversed(collection.events):
        if event.Subject:
            changes[event.Subject].append(_change(event, timezone))
    # A subscription brought in with its past (its receipts older than the item, as the
    # demo's are) is in force from its first paid period.
    first_paid: dict[str, date] = {}
    for receipt in collection.receipts:
        start = date.fromisoformat(receipt.PeriodStart or receipt.BillingDate)
        first_paid[receipt.sub_id] = min(start, first_paid.get(receipt.sub_id, start))
    return [
        build_history(account_id, sub.SK, created=_start(sub, first_paid, timezone),
                      changes=changes.get(sub.SK, ()), current=access.subscription_snapshot(sub), coupons=coupons)
        for sub in collection.subscriptions
    ]


def _start(sub: Subscription, first_paid: dict[str, date], timezone: str) -> date:
    created = day_of(sub.CreatedDate, timezone)
    return min(created, first_paid.get(sub.sub_id, created))


def read_histories() -> list[SubHistory]:
    return read_all(with_disputes=False).histories


@dataclass(frozen=True)
class Reading:
    histories: list[SubHistory]
    refunds: list[Money]  # every refund of a receipt still kept (receipts expire: RECEIPT_RETENTION_DAYS)
    disputes: list[Money]  # every dispute, on the day it was opened
    usage: list[Money] = field(default_factory=list)  # every paid charge's usage, net of tax, on the day paid


def refunds_of(collection: access.AccountCollection, timezone: str, account_id: str = "") -> list[Money]:
    return [Money(day_of(refund.At, timezone), receipt.Currency.upper(), int(refund.Amount), account_id)
            for receipt in collection.receipts for refund in receipt.Refunds or ()]


def usage_of(collection: access.AccountCollection, timezone: str, account_id: str = "") -> list[Money]:
    """The usage each paid charge billed, net of tax, on the day it was paid: from its
    ``payment.succeeded`` event (which keeps it with the audit history, not the receipt: a
    receipt expires, and a rebuild reads the history). An event written before the events
    carried ``UsageNet`` takes it from its receipt while the receipt is kept (the same
    item collection: no read more); once that receipt has expired, 0."""
    receipts = {receipt.SK: receipt for receipt in collection.receipts}
    found = []
    for event in collection.events:
        after = event.After or {}
        if event.Action != AuditAction.PAYMENT_SUCCEEDED:
            continue
        net = after.get("UsageNet")
        if net is None:
            net = receipt_usage_net(receipts.get(str(after.get("Receipt") or "")))
        if net:
            found.append(Money(day_of(event.At, timezone), str(after.get("Currency") or "").upper(),
                               int(net), account_id, event.Subject or ""))
    return found


def receipt_usage_net(receipt: Receipt | None) -> int:
    """The net of a receipt's usage lines: every line of a charge of the usage alone (a
    cancellation's, ``Kind`` "usage"), else the lines after the fixed fee's first
    (billing/access/receipts.py itemises them so); 0 for a receipt without usage."""
    if receipt is None or receipt.UsageAmount is None:
        return 0
    lines = list(receipt.TaxLines or [])
    # "usage": billing/operations/final_usage.py's USAGE_KIND (a layer above this package)
    usage_lines = lines if receipt.Kind == "usage" else lines[1:]
    return sum(int(line.Net) for line in usage_lines)


def all_disputes(timezone: str) -> list[Money]:
    """The disputes' partition, a page (one Query) at a time."""
    found: list[Money] = []
    start = None
    while True:
        page = access.disputes_page(limit=DISPUTES_PER_READ, start=start)
        found += [Money(day_of(d.OpenedAt, timezone), d.Currency.upper(), int(d.Amount), d.AccountId)
                  for d in page.items]
        if not page.next_key:
            return found
        start = page.next_key


def read_all(*, with_disputes: bool = True) -> Reading:
    """The histories, the refunds and the usage billed (from the same item collections: no
    read more) and the disputes (one Query per page of their partition)."""
    timezone = settings.BILLING_TIMEZONE
    coupons = coupon_terms()
    histories: list[SubHistory] = []
    refunds: list[Money] = []
    usage: list[Money] = []
    for account_id, collection in account_collections():
        histories += account_histories(account_id, coupons, timezone, collection)
        refunds += refunds_of(collection, timezone, account_id)
        usage += usage_of(collection, timezone, account_id)
    return Reading(histories, refunds, all_disputes(timezone) if with_disputes else [], usage)
