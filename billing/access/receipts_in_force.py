"""The receipts of the periods still in force, for the lists that show a window of
months (the portal's six months, its CSV, the staff's account page).

A receipt is listed by its billing date (``REC#<BillingDate>...``), so a window of six
months would drop a yearly (or every 9 months, every 2 years...) receipt long before its
period ends, while the customer still has that period. Its key is known without a Scan
or an index: a subscription's ``LastPaymentDate`` is the first day of its last paid
period, which is that charge's billing date, and the product charged is ``SKU``, or
``PreviousSKU`` while a switch waits for the next payment (a yearly switched to another
product's monthly price from the year's end), or ``<SKU>~switch`` when a switch of price
within the product started a new period that day (docs/MONEY.md "Switching price or
cadence"). So the receipt of each period still in force
(``PaidThroughDate`` today or later) that began before the window is read by key: one
BatchGetItem for them all, none when every period began inside the window (every
monthly customer's case).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from billing.access._common import is_expired, utc_now
from billing.models import Receipt, Subscription
from billing.rules.receipt_keys import switch_receipt_sku


def receipts_in_force(subscriptions: Iterable[Subscription], start: date, today: date, *,
                      now: datetime | None = None) -> list[Receipt]:
    """The receipt of each subscription's period in force on ``today`` that was billed
    before ``start`` (those from ``start`` on are in the window already), newest first."""
    now = now or utc_now()
    keys = {(sub.PK, Receipt.sk(billing_date=sub.LastPaymentDate, sku=sku, sub_id=sub.sub_id))
            for sub in subscriptions
            if sub.LastPaymentDate and sub.PaidThroughDate and sub.LastPaymentDate < start.isoformat()
            # paid through a day after the first one: that first day's charge was taken
            and sub.PaidThroughDate >= max(today.isoformat(), sub.LastPaymentDate)
            for sku in {sub.SKU, sub.PreviousSKU or sub.SKU, switch_receipt_sku(sub.SKU, sub.SKU)}}
    if not keys:
        return []
    found = [r for r in Receipt.batch_get(sorted(keys)) if not is_expired(r, now)]
    return sorted(found, key=lambda r: r.SK, reverse=True)


def with_receipts_in_force(receipts: list[Receipt], subscriptions: Iterable[Subscription], start: date,
                           today: date, *, now: datetime | None = None) -> list[Receipt]:
    """``receipts`` (the window's, newest first) and, after them, the older receipts of
    the periods still in force: still newest first, each once."""
    seen = {r.SK for r in receipts}
    return receipts + [r for r in receipts_in_force(subscriptions, start, today, now=now) if r.SK not in seen]
