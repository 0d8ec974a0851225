"""The usage a payment bills in arrears (docs/USAGE.md "Billing a period"): a subscription
with a metered price pays, with each payment after its first, the usage of the period
just ended, priced by the price's model (``pricing.amount_for``).

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
from billing.access.usage import mark_billed, usage_for_period
from billing.models import Price, Subscription
from billing.rules.price_objects import terms_of
from billing.rules.pricing import amount_for, amount_parts
from billing.rules.projection import ComingCharge, MeteredUsage, usage_period_start


def metered_usage(sub: Subscription, charge: ComingCharge, *, close: bool = False,
                  price: Price | None = None) -> MeteredUsage | None:
    """The usage ``charge`` bills with its fixed fee (None: no metered price, or the first
    payment). ``close``: the payment is being taken (its day has come): close the period
    first. A fractional quantity (a ``sum`` meter's decimals) is billed as the whole units
    it starts (rounded up). ``price``: the metered price when the caller has read it (a page
    that names it too). Requests: the price's GetItem (unless given), the meter's GetItem,
    one Query; with ``close``, one conditional UpdateItem per usage shard before them."""
    if not sub.MeteredPriceId:
        return None
    if not sub.LastPaymentDate:  # read from GSI-1 (a reminder): where the last payment's period began
        sub = get_subscription(sub.account_id, sub.sub_id, sub.key_sku) or sub
    start = usage_period_start(sub, charge)
    if start is None:
        return None
    if price is None or price.PriceId != sub.MeteredPriceId:
        price = get_price(sub.MeteredPriceId)
    if price is None or not price.Meter:
        return None
    end = charge.period_start  # exclusive
    if close:
        mark_billed(sub.account_id, price.Meter, end - timedelta(days=1))
    used = usage_for_period(sub.account_id, price.Meter, start, end)
    return priced_usage(price, start, end, math.ceil(used))


def priced_usage(price: Price, start: date, end: date, quantity: int) -> MeteredUsage:
    """``quantity`` of ``price``'s meter over ``[start, end)``, priced, with how its amount
    adds up tier by tier (the invoice's lines: no read more, the price is in hand)."""
    terms = terms_of(price)
    parts = tuple(amount_parts(terms, quantity))
    return MeteredUsage(price.PriceId, str(price.Meter), start, end, quantity, amount_for(terms, quantity),
                        parts, price.UnitLabel or None)


def usage_metadata(usage: MeteredUsage) -> dict[str, str]:
    """The usage a charge carries in its metadata: recorded as charged (a replayed key
    returns the first call's)."""
    return {"usage_price": usage.price_id, "usage_meter": usage.meter, "usage_start": usage.start.isoformat(),
            "usage_end": usage.end.isoformat(), "usage_quantity": str(usage.quantity),
            "usage_amount": str(usage.amount)}


def usage_priced(metadata: dict[str, str]) -> MeteredUsage | None:
    """The usage a recorded charge billed (its metadata), priced again by its price (one
    GetItem: a price's amounts never change): its tiers for the invoice's lines, when the
    charge is recorded by another path than the one that priced it. None: no usage."""
    if "usage_price" not in metadata:
        return None
    price = get_price(metadata["usage_price"])
    if price is None or not price.Meter:
        return None
    return priced_usage(price, date.fromisoformat(metadata["usage_start"]), date.fromisoformat(metadata["usage_end"]),
                        int(metadata["usage_quantity"]))
