"""The demo's switches of price (docs/MONEY.md "Switching price or cadence"): a demo
customer of its own, ``switcher@example.com`` (log-in password as the demo customer's),
with two Photo editor Pro subscriptions made today through the portal's own actions: one
monthly, switched at once to the yearly price (a new year from today, its price less the
unused month's credit, charged), and one yearly, switched to the monthly price from the
end of its paid year (nothing charged now). The prices part runs first and makes the
yearly price. Safe to run twice: a customer who has switched already is left as it is."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.actions import subscriptions as subscribing
from billing.actions import switch as switch_actions
from billing.management.commands.seed_demo import access_token
from billing.management.demo._customers import default_card, demo_customer
from billing.models import Account, Price, Product
from billing.rules.price_choice import choose_price

EMAIL = "switcher@example.com"
SKU = "PHOTO-PRO"


def _subscribe(account: Account, product: Product, price: Price, today: date) -> str | None:
    card = default_card(account)
    started = subscribing.subscribe_to_price(
        account, product, choose_price(price, product), payment_day=today.day, card=access_token(card), today=today,
        actor=EMAIL, billing_address=card.Details.BillingAddress, card_id=card.card_id, trial=False)
    return started.sub.sub_id if started.started else None


def seed(today: date) -> list[str]:
    product = access.get_product(SKU)
    yearly = next((p for p in access.list_prices(SKU) if p.Nickname == "Yearly"), None) if product else None
    if product is None or yearly is None:
        return [f"switched prices: no Yearly price of {SKU}: run the prices part first"]
    account = demo_customer(EMAIL)
    if any(s.LastSwitchDate for s in access.get_subscriptions_by_account(account.account_id)):
        return [f"switched prices: {EMAIL} has switched already"]
    monthly = access.default_price(product)
    lines = []
    for start, to, words in ((monthly, yearly.PriceId, "monthly to yearly, now"),
                             (yearly, SKU, "yearly to monthly, from the end of the paid year")):
        sub_id = _subscribe(account, product, start, today)
        sub = access.get_subscription(account.account_id, sub_id, SKU) if sub_id else None
        if sub is None:
            lines.append(f"switched prices: {EMAIL}'s {product.Name} did not start")
            continue
        done = switch_actions.switch(sub, to, today=today, actor=EMAIL, on_session=False)
        if done.client_secret:  # a demo card that asks for 3-D Secure: not switched
            switch_actions.abandon(done, today=today)
            lines.append(f"switched prices: {EMAIL}'s {product.Name} not switched (the bank asks the customer)")
            continue
        lines.append(f"switched prices: {EMAIL}'s {product.Name} {words} "
                     f"({done.charged / 100:.2f} {sub.Currency} charged now)")
    return lines
