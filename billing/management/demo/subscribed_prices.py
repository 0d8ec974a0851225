"""The demo's subscriptions to chosen prices (docs/PRICING.md "Subscribing to a price"):
a demo customer of its own, ``team@example.com`` (log-in password as the demo customer's),
subscribed through the portal's own action to the Photo editor Pro's yearly price
($120.00 a year) and to the Team workspace's seat price at three seats, two more added the
same day ($10.00 a seat a month, $50.00 a month), and to the Support desk's price by volume
tiers at 12 agents (all 12 at the second tier's $9.00: $108.00 a month; docs/PRICING.md
"Seats priced by tiers"), each first period charged at once. The prices part runs first
(its module name sorts first) and makes those prices. Safe to run twice: a price the
customer has a live subscription to is left as it is."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.actions import seats as seat_actions
from billing.actions import subscriptions as subscribing
from billing.management.commands.seed_demo import access_token
from billing.management.demo._customers import default_card, demo_customer
from billing.rules.price_choice import choose_price

EMAIL = "team@example.com"
# (sku, the price's nickname in the prices part, seats subscribed, seats after a change)
CHOICES = [("PHOTO-PRO", "Yearly", None, None), ("TEAM-SEATS", "Per seat", 3, 5), ("SUPPORT-DESK", "By volume", 12, None)]


def seed(today: date) -> list[str]:
    account = demo_customer(EMAIL)
    lines = []
    subs = access.get_subscriptions_by_account(account.account_id)
    for sku, nickname, seats, later in CHOICES:
        product = access.get_product(sku)
        price = next((p for p in access.list_prices(sku) if p.Nickname == nickname), None)
        if product is None or price is None:
            lines.append(f"subscribed prices: no {nickname} price of {sku}: run the prices part first")
            continue
        if any(s.is_live and s.PriceId == price.PriceId for s in subs):
            lines.append(f"subscribed prices: {EMAIL} has {sku} {price.PriceId} already")
            continue
        choice = choose_price(price, product, seats)
        card = default_card(account)
        started = subscribing.subscribe_to_price(
            account, product, choice, payment_day=today.day, card=access_token(card), today=today, actor=EMAIL,
            billing_address=card.Details.BillingAddress, card_id=card.card_id)
        state = "started" if started.started else "did not start"
        lines.append(f"subscribed prices: {EMAIL}'s {product.Name} at {price.PriceId} × {choice.quantity}, "
                     f"{choice.amount / 100:.2f} {choice.currency} every {choice.interval_count} {choice.interval}: "
                     f"{state}")
        if started.started and later:
            # Seats added the same day through the portal's own action: their first period
            # charged at once, with its receipt (docs/MONEY.md "Seats").
            sub = access.get_subscription(account.account_id, started.sub.sub_id, sku) or started.sub
            done = seat_actions.change_quantity(sub, later, EMAIL, today=today)
            lines.append(f"subscribed prices: {EMAIL}'s {product.Name} now {later} seats "
                         f"({done.charged / 100:.2f} {choice.currency} charged for the added seats)")
    return lines
