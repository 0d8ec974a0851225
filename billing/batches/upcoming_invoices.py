"""The merchant's ``invoice.upcoming`` (Stripe's name and habit): ``UPCOMING_INVOICE_DAYS``
(3) before each payment that bills usage, the payment as ``GET
/subscriptions/{id}/upcoming`` shows it at that moment (the fixed fee and the usage so far,
line by line): the same function the payment run charges by.

Later than the customer's reminder (its cadence's lead, 7 days for a month) on purpose: a
merchant who adds charges or checks an estimate does it on the freshest usage. A payment
with no usage (a fixed price alone, a first payment) has none: its amount is the
subscription's, known already (Stripe sends the event before every renewal; rpay before
those whose amount moves with usage: docs/USAGE.md "invoice.upcoming").

Two sources, no Scan and no new index: the renewals due that day (GSI-2, one Query per
shard; it projects ``MeteredPriceId``, so only a metered subscription is read by key) and
the last usage charges of subscriptions ending at their period's end (their entries'
one partition). Each event is written in one transaction with its claim (the
subscription's ``UpcomingNoticeFor``, the entry's ``UpcomingNoticeOn``): a re-run, two
runs at once or a run killed midway write each event once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, timedelta

from django.conf import settings

from billing import access
from billing.access.usage_billing import record_last_usage_notice
from billing.models import MerchantEvent, MerchantEventType, Subscription, SubscriptionStatus, UsageEndEntry
from billing.operations.charge_lines import upcoming_object
from billing.operations.final_usage import last_usage_charge, still_ends, told_in_advance
from billing.operations.payments import next_charge
from billing.rules.projection import ComingCharge
from billing.rules.tax import Seller


def notice_days() -> int:
    return settings.UPCOMING_INVOICE_DAYS


def _notice(sub: Subscription, charge: ComingCharge, seller: Seller | None) -> MerchantEvent:
    return access.new_merchant_event(
        MerchantEventType.INVOICE_UPCOMING, account_id=sub.account_id, object_type="upcoming_payment",
        object_id=sub.sub_id, data=upcoming_object(sub, charge, access.tax_terms(sub, seller)))


def announce_upcoming_invoices(day: date, *, shards: list[int] | None = None,
                               seller: Seller | None = None) -> int:
    """Write ``invoice.upcoming`` for the renewals due ``notice_days()`` after ``day`` that
    bill usage; returns how many were written. Requests: one Query of GSI-2 per shard,
    then per metered subscription due that day its GetItem, the charge's reads (price,
    meter, usage) and the claim's TransactWriteItems; nothing per fixed-price one."""
    payment = day + timedelta(days=notice_days())
    written = 0
    for due in access.get_due_payments_by_date(payment, shards=shards):
        if not due.MeteredPriceId or due.Status != SubscriptionStatus.ACTIVE:
            continue  # a fixed price's (nothing to estimate); a past-due retry's (its own e-mails)
        sub = access.get_subscription(due.account_id, due.sub_id, due.key_sku)
        if sub is None or sub.UpcomingNoticeFor == payment.isoformat() or sub.NextPaymentDate != payment.isoformat():
            continue
        charge = next_charge(sub, seller=seller)  # the full item: a first payment bills no usage
        if not charge.usages:
            continue
        written += access.record_upcoming_invoice(sub, payment, _notice(sub, charge, seller))
    return written


def announce_last_usage(today: date, entries: Iterable[UsageEndEntry], *,
                        takes: Callable[[str], bool] | None = None, seller: Seller | None = None) -> int:
    """Write ``invoice.upcoming`` for the last usage charges (subscriptions cancelled at
    their period's end) of ``entries`` (the ending entries after ``today``, as the
    reminders read them) due within ``notice_days()`` after ``today``, missed days' too;
    returns how many were written. Per entry still to announce its subscription's GetItem,
    the usage's reads and the claim. Nothing used so far: nothing to announce yet; the
    next run looks again."""
    written = 0
    last_due = today + timedelta(days=notice_days())
    for entry in entries:
        if entry.due > last_due or entry.UpcomingNoticeOn or not told_in_advance(entry) \
                or (takes is not None and not takes(entry.SubId)):
            continue
        sub = access.get_subscription(entry.AccountId, entry.SubId, entry.SKU)
        if sub is None or not still_ends(sub, entry):
            continue  # kept or ended otherwise: the payment run deletes the entry
        charge = last_usage_charge(sub, today)
        if charge is None or charge.amount <= 0:
            continue
        written += record_last_usage_notice(entry, today, _notice(sub, charge, seller))
    return written

