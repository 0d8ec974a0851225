"""Meters and usage events (docs/USAGE.md): adding a meter (audited with the catalog, as
products are) and counting a usage event exactly once (billing/access/usage.py)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from billing import access
from billing.access import usage as metered
from billing.access import usage_billing
from billing.models import CATALOG_EVENTS_ACCOUNT, Meter, MeterAggregation, Price, Subscription
from billing.rules.metered_items import removable
from billing.rules.usage import EventRefused, check_event_name, day_of, event_moment, event_value
from billing.rules.usage_metadata import MAX_METERED_PRICES
from core.clock import billing_today

# The audit event of a new meter (in the catalog's pseudo-account: a meter belongs to no customer).
METER_CREATED = "staff.create_meter"
MAX_NAME = 200


def add_meter(event_name: str, name: str, aggregation: MeterAggregation, *, actor: str) -> Meter:
    """A new meter; ``AlreadyExists`` when its event name is taken (nothing written);
    ``EventRefused`` for an event name that cannot be one."""
    check_event_name(event_name)
    name = name.strip()
    if not 0 < len(name) <= MAX_NAME or not name.isprintable():
        raise EventRefused("invalid_name", "name", f"name is 1-{MAX_NAME} printable characters.")
    meter = metered.create_meter(event_name, name, aggregation, actor=actor)
    access.record_event(CATALOG_EVENTS_ACCOUNT, actor=actor, action=METER_CREATED, subject=f"METER#{event_name}",
                        before=None, after={"EventName": event_name, "Name": name, "Aggregation": str(aggregation)})
    return meter


def identifier_of(raw: object) -> str:
    if not isinstance(raw, str) or not 0 < len(raw) <= 100 or not raw.isprintable() or "#" in raw:
        raise EventRefused("invalid_identifier", "identifier",
                           "identifier is required: 1-100 printable characters, without '#' (the same on every retry).")
    return raw


def customer_of(raw: object) -> str:
    if not isinstance(raw, str) or not 0 < len(raw) <= 100 or not raw.isprintable() or "#" in raw:
        raise EventRefused("unknown_customer", "customer", "No such customer (or the account is closed).")
    return raw


def record_usage(meter: Meter, *, customer: object, identifier: object, value: object, timestamp: object,
                 now: datetime) -> metered.Recorded:
    """Check one event (billing/rules/usage.py) and count it once: ``accepted`` or
    ``duplicate``; ``EventRefused`` names the reason and the field."""
    seconds = event_moment(int(now.timestamp()) if timestamp is None else timestamp, now)
    event = metered.UsageEvent(account_id=customer_of(customer), identifier=identifier_of(identifier),
                               value=event_value(value, MeterAggregation(meter.Aggregation)),
                               timestamp=seconds, day=day_of(seconds, settings.BILLING_TIMEZONE))
    return metered.record_event(meter, event, now=now)


def attach_metered_price(sub: Subscription, price_id: str, *, actor: str) -> Subscription:
    """From its next payment on, ``sub`` also pays its usage of ``price_id``'s meter
    (docs/USAGE.md "Billing a period"), or keeps it when it was being removed: the access
    write with its audit event, for the API and the portal, which never write themselves.
    ``NotMetered`` as the access's."""
    return usage_billing.attach_metered_price(sub, price_id, actor=actor)


def remove_metered_price(sub: Subscription, price_id: str, *, actor: str, now: bool = False) -> Subscription:
    """``price_id`` leaves ``sub`` at its period's end, or ``now`` (today's usage the last
    billed), its usage through that day billed by the next payment (docs/USAGE.md
    "Removing a metered price"). ``NotMetered`` naming why it cannot be."""
    return usage_billing.remove_metered_price(
        sub, price_id, actor=actor, today=billing_today(settings.BILLING_TIMEZONE) if now else None)


def replace_metered_price(sub: Subscription, price_id: str, new_price_id: str, *, actor: str,
                          now: bool = False) -> Subscription:
    """``new_price_id`` (of the same meter) replaces ``price_id`` at the period's end, or
    ``now`` (today's usage the old price's last) (docs/USAGE.md "Changing a metered
    price"). ``NotMetered`` naming why it cannot be."""
    return usage_billing.replace_metered_price(
        sub, price_id, new_price_id, actor=actor, today=billing_today(settings.BILLING_TIMEZONE) if now else None)


def replacements(sub: Subscription) -> list[tuple[Price, Price]]:
    """Each (price, replacement) ``sub`` could change at the period's end: an active price
    of the same meter, currency and cadence for each of its metered prices it could remove
    (the catalog's one Query and a GetItem of each of its own)."""
    if not sub.is_live:
        return []
    can = set(removable(sub))
    own = [price for price in access.metered_prices(sub).values() if price.PriceId in can]
    _, prices = access.list_products_with_prices()
    return [(price, other) for price in own for others in prices.values() for other in others
            if other.Meter == price.Meter and other.PriceId not in sub.metered_price_ids
            and usage_billing.why_not_metered(sub, other, other.PriceId, set()) is None]


def addable_metered_prices(sub: Subscription) -> list[tuple[str, Price]]:
    """The active metered prices ``sub`` could bill beside its own (the rules
    ``attach_metered_price`` applies), each with its product's name, by product, and its
    own being removed (to keep them): the catalog's one Query
    (``list_products_with_prices``, as the subscribe page reads it) and a GetItem of each
    of its own."""
    if not sub.is_live:
        return []
    own = access.metered_prices(sub)
    ending = sub.metered_ends
    billed = {price.Meter for price in own.values()}
    products, prices = access.list_products_with_prices()
    names = {product.SKU: product.Name for product in products}
    # a price being removed can be kept, unless another of its meter replaces it
    day = billing_today(settings.BILLING_TIMEZONE).isoformat()
    replacing = {price.Meter for price in own.values() if sub.metered_starts.get(price.PriceId, day) > day}
    kept = [(names.get(price.SKU, price.SKU), price) for price in own.values()
            if price.PriceId in ending and price.Meter not in replacing]
    if len(sub.metered_price_ids) >= MAX_METERED_PRICES:
        return kept
    return kept + [(product.Name, price) for product in products for price in prices.get(product.SKU, [])
                   if price.PriceId not in sub.metered_price_ids
                   and usage_billing.why_not_metered(sub, price, price.PriceId, billed) is None]


def removable_metered_prices(sub: Subscription) -> list[Price]:
    """``sub``'s metered prices it could remove now (``metered_items.removable``), a GetItem
    each."""
    can = set(removable(sub))
    return [price for price in access.metered_prices(sub).values() if price.PriceId in can]
