"""The demo's subscription to usage alone (docs/USAGE.md "Usage alone"): a demo customer of
its own, ``payg@example.com`` (log-in password as the demo customer's), subscribed today to
the ``API-ACCESS`` metered price "API calls" alone (first 1,000 calls free, then $0.002 a
call, a month; no fixed fee), its first payment a receipt of 0, and today's calls sent (1,800:
the subscription page's estimate of the next payment is $1.60). Runs after the prices and
usage parts (its name sorts after theirs: the price and the meter exist). Safe to run twice:
a customer subscribed to that price already is left as it is, and the calls' identifiers
are fixed, so a second run finds them duplicates."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from decimal import Decimal

from billing import access
from billing.access import usage as metered
from billing.actions import subscriptions as subscribing
from billing.management.commands.seed_demo import access_token
from billing.management.demo._customers import default_card, demo_customer
from billing.rules.price_choice import choose_usage_only
from billing.rules.usage import day_of

EMAIL = "payg@example.com"
SKU, NICKNAME = "API-ACCESS", "API calls"
CALLS = ((2, 600), (9, 700), (16, 500))  # (hour, calls) today: 1,800 in all


def seed(today: date) -> list[str]:
    product = access.get_product(SKU)
    price = next((p for p in access.list_prices(SKU) if p.Nickname == NICKNAME), None)
    meter = metered.get_meter(price.Meter) if price is not None and price.Meter else None
    if product is None or price is None or meter is None:
        return [f"usage alone: no metered {NICKNAME} price of {SKU}: run the prices and usage parts first"]
    account = demo_customer(EMAIL)
    subs = access.get_subscriptions_by_account(account.account_id)
    lines = []
    if not any(s.is_live and s.MeteredPriceId == price.PriceId for s in subs):
        card = default_card(account)
        started = subscribing.subscribe_to_price(
            account, product, choose_usage_only(price, product), payment_day=today.day, card=access_token(card),
            today=today, actor=EMAIL, billing_address=card.Details.BillingAddress, card_id=card.card_id)
        lines.append(f"usage alone: {EMAIL} subscribed to {product.Name}'s {price.PriceId} alone (no fixed fee): "
                     f"{'started' if started.started else 'did not start'}")
    now = datetime.combine(today, time(23, 59), tzinfo=UTC)
    accepted = 0
    for hour, calls in CALLS:
        seconds = int(datetime.combine(today, time(hour), tzinfo=UTC).timestamp())
        event = metered.UsageEvent(account_id=account.account_id, identifier=f"payg-{today.isoformat()}-{hour:02d}",
                                   value=Decimal(calls), timestamp=seconds, day=day_of(seconds))
        accepted += metered.record_event(meter, event, now=now) == metered.ACCEPTED
    lines.append(f"usage alone: {accepted} events of {EMAIL}'s calls today")
    return lines
