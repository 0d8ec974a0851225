"""The demo's second meter (docs/USAGE.md "Several metered prices"): the subscription the
usage billing part gave the "API calls" price is also billed for its storage, a meter
``storage_gb`` (the period's highest reading, ``max``) priced by the GB ($0.10 a GB a
month, ``API-ACCESS`` "Storage"), with a month of daily readings. Its next payment then
bills both meters' usage, a line a tier of each, beside its fixed fee. Runs after the
prices, usage and usage billing parts (its name sorts after theirs). Safe to run twice:
the meter and the price are made once, the readings' identifiers are fixed, and a price
named already is not named again."""

from __future__ import annotations

import contextlib
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model

from billing import access
from billing.access import usage as metered
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.exceptions import AlreadyExists
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, SEED_ACTOR
from billing.management.demo._customers import usage_moment
from billing.management.demo.usage_billing import NICKNAME as CALLS
from billing.management.demo.usage_billing import SKU
from billing.models import MeterAggregation, Price, Subscription
from billing.rules.pricing import PriceTerms

METER, NICKNAME = "storage_gb", "Storage"
STORAGE = PriceTerms("USD", unit_amount=Decimal(10))  # 10 cents a GB a month
DAYS = 30


def seed(today: date) -> list[str]:
    calls = next((p for p in access.list_prices(SKU) if p.Nickname == CALLS), None)
    billed = [s for s in demo_subscriptions() if calls is not None and s.MeteredPriceId == calls.PriceId and s.is_live]
    if not billed:
        return [f"usage meters: no subscription of {CUSTOMER_EMAIL} bills {CALLS}: run the usage billing part first"]
    price = demo_metered_price(METER, "Storage (GB)", MeterAggregation.MAX, NICKNAME, STORAGE, "GB")
    # billed already (a second run; its price perhaps being replaced since): left as it is
    sub = billed[0] if price.PriceId in billed[0].metered_price_ids else \
        attach_metered_price(billed[0], price.PriceId, actor=SEED_ACTOR)
    meter = metered.get_meter(METER)
    assert meter is not None
    now = datetime.combine(today, time(23, 59), tzinfo=UTC)
    for back in range(DAYS - 1, -1, -1):
        day = today - timedelta(days=back)
        seconds, key = usage_moment(day, 6)
        # a store that grows by half a GB a day
        event = metered.UsageEvent(account_id=sub.account_id, identifier=f"demo-storage-{day.isoformat()}",
                                   value=Decimal(12 + (DAYS - back) // 2), timestamp=seconds, day=key)
        metered.record_event(meter, event, now=now)
    return [f"usage meters: {CUSTOMER_EMAIL}'s {sub.ProductName or sub.SKU} ({sub.sub_id}) also bills {METER} "
            f"at {price.PriceId}: {len(sub.metered_price_ids)} metered prices"]


def demo_metered_price(event_name: str, meter_name: str, aggregation: MeterAggregation, nickname: str,
                       terms: PriceTerms, unit_label: str) -> Price:
    """The demo's meter ``event_name`` and its ``API-ACCESS`` price ``nickname``, each made
    once (a second run finds them)."""
    with contextlib.suppress(AlreadyExists):  # made by an earlier run
        meter_actions.add_meter(event_name, meter_name, aggregation, actor=SEED_ACTOR)
    return next((p for p in access.list_prices(SKU) if p.Nickname == nickname), None) or price_actions.add_price(
        SKU, terms, actor=SEED_ACTOR, nickname=nickname, unit_label=unit_label, meter=event_name)


def demo_subscriptions() -> list[Subscription]:
    user = get_user_model().objects.filter(email__iexact=CUSTOMER_EMAIL).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    return access.get_subscriptions_by_account(account_id) if account_id else []
