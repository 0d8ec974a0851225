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
from billing.management.demo._customers import default_card, demo_customer, usage_moment
from billing.models import Meter, Price, Product, Subscription
from billing.rules.lifecycle import last_usage_billed_on
from billing.rules.price_choice import choose_usage_only

EMAIL = "payg@example.com"
SKU, NICKNAME = "API-ACCESS", "API calls"
CALLS = ((2, 600), (9, 700), (16, 500))  # (hour, calls) today: 1,800 in all


def seed(today: date) -> list[str]:
    return subscribed_alone(today, EMAIL, CALLS, "payg", "usage alone")[0]


def api_calls_price(label: str) -> tuple[Product, Price, Meter] | str:
    """The prices part's ``API-ACCESS`` product, its metered "API calls" price and the
    usage part's meter; else the line that says to run those parts first."""
    product = access.get_product(SKU)
    price = next((p for p in access.list_prices(SKU) if p.Nickname == NICKNAME), None)
    meter = metered.get_meter(price.Meter) if price is not None and price.Meter else None
    if product is None or price is None or meter is None:
        return f"{label}: no metered {NICKNAME} price of {SKU}: run the prices and usage parts first"
    return product, price, meter


def subscribed_alone(today: date, email: str, calls: tuple[tuple[int, int], ...], ids: str,
                     label: str) -> tuple[list[str], Subscription | None]:
    """``email``'s demo customer subscribed today to the metered API calls alone (unless it
    is already), and today's ``calls`` sent under identifiers ``<ids>-<day>-<hour>``: the
    lines to print (each starting with ``label``) and the subscription."""
    found = api_calls_price(label)
    if isinstance(found, str):
        return [found], None
    product, price, meter = found
    account = demo_customer(email)
    subs = access.get_subscriptions_by_account(account.account_id)
    # live, or running to its period's end after a cancel: subscribed already
    sub = next((s for s in subs if s.MeteredPriceId == price.PriceId
                and (s.is_live or last_usage_billed_on(s, today))), None)
    lines = []
    if sub is None:
        card = default_card(account)
        started = subscribing.subscribe_to_price(
            account, product, choose_usage_only(price, product), payment_day=today.day, card=access_token(card),
            today=today, actor=email, billing_address=card.Details.BillingAddress, card_id=card.card_id)
        sub = started.sub
        lines.append(f"{label}: {email} subscribed to {product.Name}'s {price.PriceId} alone (no fixed fee): "
                     f"{'started' if started.started else 'did not start'}")
    now = datetime.combine(today, time(23, 59), tzinfo=UTC)
    accepted = 0
    for hour, count in calls:
        seconds, key = usage_moment(today, hour)
        event = metered.UsageEvent(account_id=account.account_id, identifier=f"{ids}-{today.isoformat()}-{hour:02d}",
                                   value=Decimal(count), timestamp=seconds, day=key)
        accepted += metered.record_event(meter, event, now=now) == metered.ACCEPTED
    lines.append(f"{label}: {accepted} events of {email}'s calls today")
    return lines, sub
