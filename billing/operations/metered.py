"""The usage a payment bills in arrears (docs/USAGE.md "Billing a period"): a subscription
with a metered price pays, with each payment after its first, the usage of the period
just ended (each of its metered prices'), priced by the price's model (``pricing.amount_for``).

One function for the estimate and the charge (``payments.next_charge``): before the
payment day it reads the usage so far; on it the payment first closes the period
(``mark_billed`` through its last day: a later event of it is refused), then reads it
strongly consistent. Every event accepted is so in exactly one period's aggregate, and a
retried charge (the same key) re-reads the same closed aggregate."""

from __future__ import annotations

import math
from datetime import date, timedelta

from billing.access.prices import get_price
from billing.access.subscriptions import get_subscription
from billing.access.usage import counted_for_period, mark_billed
from billing.models import Price, Subscription
from billing.rules.metered_items import billed_from, billed_until
from billing.rules.price_objects import terms_of
from billing.rules.pricing import amount_for, amount_parts
from billing.rules.projection import ComingCharge, MeteredUsage, usage_period_start
from billing.rules.usage_metadata import usage_records


def metered_usages(sub: Subscription, charge: ComingCharge, *, close: bool,
                   prices: dict[str, Price] | None = None) -> tuple[MeteredUsage, ...]:
    """The usage ``charge`` bills with its fixed fee, each metered price's in the
    subscription's order (empty: none, or the first payment). ``close``: the payment is
    being taken (its day has come): close each period first. A fractional quantity (a
    ``sum`` meter's decimals) is billed as the whole units it starts (rounded up).
    ``prices``: the metered prices the caller has read, by id (a page that names them too).
    Requests, per metered price: its GetItem (unless given), the meter's GetItem, one Query;
    with ``close``, one conditional UpdateItem per usage shard before them."""
    if not sub.MeteredPriceId:
        return ()
    if not sub.LastPaymentDate:  # read from GSI-1 (a reminder): where the last payment's period began
        sub = get_subscription(sub.account_id, sub.sub_id, sub.key_sku) or sub
    start = usage_period_start(sub, charge)
    if start is None:
        return ()
    return usages_over(sub, start, charge.period_start, close=close, prices=prices)


def usages_over(sub: Subscription, start: date, end: date, *, close: bool,
                prices: dict[str, Price] | None = None) -> tuple[MeteredUsage, ...]:
    """Each of ``sub``'s metered prices' usage over the days ``[start, end)``, priced, in
    its order (a price gone, or no longer metered, is passed over; one removed, over its
    days through its last one; one replacing it, over its days from its first one). ``close``: each meter's
    days up to ``end`` are closed first (``mark_billed``), so the read is what is billed."""
    usages, ends, starts = [], sub.metered_ends, sub.metered_starts
    for price_id in sub.metered_price_ids:
        # A price removed bills its days through its last one only; one replacing it, from
        # the day after on.
        since, until = billed_from(start, starts.get(price_id)), billed_until(end, ends.get(price_id))
        if until <= since:
            continue
        price = (prices or {}).get(price_id) or get_price(price_id)
        if price is None or not price.Meter:
            continue
        if close:
            mark_billed(sub.account_id, price.Meter, until - timedelta(days=1))
        used = counted_for_period(sub.account_id, price.Meter, since, until)
        usages.append(priced_usage(price, since, until, math.ceil(used.quantity), events=used.events))
    return tuple(usages)


def priced_usage(price: Price, start: date, end: date, quantity: int, *, events: int = 0) -> MeteredUsage:
    """``quantity`` of ``price``'s meter over ``[start, end)`` (``events`` counted), priced,
    with how its amount adds up tier by tier (the invoice's lines: no read more, the price
    is in hand)."""
    terms = terms_of(price)
    parts = tuple(amount_parts(terms, quantity))
    return MeteredUsage(price.PriceId, str(price.Meter), start, end, quantity, amount_for(terms, quantity),
                        parts, price.UnitLabel or None, events)


def usage_priced(metadata: dict[str, str]) -> tuple[MeteredUsage, ...]:
    """The usage a recorded charge billed (its metadata), priced again by each price (a
    GetItem each: a price's amounts never change): their tiers for the invoice's lines,
    when the charge is recorded by another path than the one that priced it. Empty: no
    usage, or a price gone (its usage is then one line)."""
    if "usage_start" not in metadata:
        return ()
    start, end = date.fromisoformat(metadata["usage_start"]), date.fromisoformat(metadata["usage_end"])
    priced = []
    for record in usage_records(metadata):
        price = get_price(record["price"])
        if price is None or not price.Meter:
            return ()
        priced.append(priced_usage(price, start, end, int(record["quantity"])))
    return tuple(priced)
