"""The demo's metered price changed at the period's end (docs/USAGE.md "Changing a metered
price"): the subscription billing the storage at $0.10 a GB moves to "Storage 2027",
$0.08 a GB, from the day after the last day paid for. Its next payment bills the month's
storage at the old price, the payments after it at the new one: the account page says
"…, until <day>" and "…, from <day>", the usage page when the new price starts. Runs after
the usage meters part (its name sorts after theirs). Safe to run twice: the price is made
once, and a subscription whose storage is being replaced already is left as it is."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from billing import access
from billing.actions import meters as meter_actions
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, SEED_ACTOR
from billing.management.demo.usage_billing import SKU
from billing.management.demo.usage_meters import METER, demo_metered_price, demo_subscriptions
from billing.management.demo.usage_meters import NICKNAME as STORAGE
from billing.models import MeterAggregation
from billing.rules.pricing import PriceTerms

NICKNAME = "Storage 2027"
CHEAPER = PriceTerms("USD", unit_amount=Decimal(8))  # 8 cents a GB a month


def seed(today: date) -> list[str]:
    storage = next((p for p in access.list_prices(SKU) if p.Nickname == STORAGE), None)
    billed = [s for s in demo_subscriptions() if storage is not None and s.is_live
              and storage.PriceId in s.metered_price_ids]
    if storage is None or not billed:
        return [f"usage repriced: no subscription of {CUSTOMER_EMAIL} bills {STORAGE}: run the usage meters part "
                "first"]
    price = demo_metered_price(METER, "Storage (GB)", MeterAggregation.MAX, NICKNAME, CHEAPER, "GB")
    sub = billed[0]
    if price.PriceId not in sub.metered_price_ids:
        sub = meter_actions.replace_metered_price(sub, storage.PriceId, price.PriceId, actor=SEED_ACTOR)
    return [f"usage repriced: {CUSTOMER_EMAIL}'s {sub.ProductName or sub.SKU} ({sub.sub_id}) bills {METER} at "
            f"{price.PriceId} from {sub.metered_starts.get(price.PriceId)}"]
