"""The demo's metered price being removed (docs/USAGE.md "Removing a metered price"): the
subscription billing the API calls and the storage was also billed for its webhook
deliveries (a ``count`` meter ``webhook_deliveries``, ``API-ACCESS`` "Webhooks", $0.01 a
delivery); that price is removed at the period's end. Its deliveries so far are billed by
the next payment with the other meters, and none after: the account page says "…, until
<day>", the usage page that it is no longer billed after that day. Runs after the usage
meters part (its name sorts after theirs). Safe to run twice: the meter and the price are
made once, the deliveries' identifiers are fixed, and a price being removed is not
removed again."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from billing import access
from billing.access import usage as metered
from billing.actions import meters as meter_actions
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, SEED_ACTOR
from billing.management.demo._customers import usage_moment
from billing.management.demo.usage_billing import SKU
from billing.management.demo.usage_meters import NICKNAME as STORAGE
from billing.management.demo.usage_meters import demo_metered_price, demo_subscriptions
from billing.models import MeterAggregation
from billing.rules.pricing import PriceTerms

METER, NICKNAME = "webhook_deliveries", "Webhooks"
WEBHOOKS = PriceTerms("USD", unit_amount=Decimal(1))  # a cent a delivery
DAYS = 10


def seed(today: date) -> list[str]:
    storage = next((p for p in access.list_prices(SKU) if p.Nickname == STORAGE), None)
    billed = [s for s in demo_subscriptions() if storage is not None and s.is_live
              and storage.PriceId in s.metered_price_ids]
    if not billed:
        return [f"usage removed: no subscription of {CUSTOMER_EMAIL} bills {STORAGE}: run the usage meters part first"]
    price = demo_metered_price(METER, "Webhook deliveries", MeterAggregation.COUNT, NICKNAME, WEBHOOKS, "delivery")
    sub = billed[0]
    if price.PriceId not in sub.metered_price_ids:
        sub = meter_actions.attach_metered_price(sub, price.PriceId, actor=SEED_ACTOR)
    meter = metered.get_meter(METER)
    assert meter is not None
    now = datetime.combine(today, time(23, 59), tzinfo=UTC)
    for back in range(DAYS - 1, -1, -1):
        day = today - timedelta(days=back)
        for n in range(3 + back % 4):  # a few deliveries a day
            seconds, key = usage_moment(day, 8 + n)
            event = metered.UsageEvent(account_id=sub.account_id, identifier=f"demo-webhook-{day.isoformat()}-{n}",
                                       value="1", timestamp=seconds, day=key)
            metered.record_event(meter, event, now=now)
    sub = meter_actions.remove_metered_price(sub, price.PriceId, actor=SEED_ACTOR)
    return [f"usage removed: {CUSTOMER_EMAIL}'s {sub.ProductName or sub.SKU} ({sub.sub_id}) bills {METER} "
            f"at {price.PriceId} until {sub.metered_ends[price.PriceId]}, then no more"]
