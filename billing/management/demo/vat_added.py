"""The demo's price with VAT added (docs/TAX.md "A price's tax behaviour"): a product of
its own, Bookkeeping for businesses (€20.00 a month, as the seller's profile says: VAT
included), with a price whose amounts have the VAT added (Stripe's ``tax_behavior``
``exclusive``), and a demo customer of its own, ``vat-added@example.com`` (log-in
password as the demo customer's), subscribed to it through the portal's own action: its
first payment is €20.00 + 22% Italian VAT = €24.40, its invoice €20.00 net and €4.40 VAT.
Safe to run twice: the price is made once, and a customer with a live subscription to it
is left as it is."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from billing import access
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.management.commands.seed_demo import SEED_ACTOR, access_token
from billing.management.demo._customers import default_card, demo_customer
from billing.rules.price_choice import choose_price
from billing.rules.pricing import PriceTerms
from billing.rules.tax import TaxBehavior

EMAIL = "vat-added@example.com"
SKU, NAME, NICKNAME = "BOOKKEEPING", "Bookkeeping for businesses", "VAT added"


def seed(today: date) -> list[str]:
    product = access.get_product(SKU) or access.create_product(SKU, NAME, 2000, "EUR")
    price = next((p for p in access.list_prices(SKU) if p.Nickname == NICKNAME), None) or price_actions.add_price(
        SKU, PriceTerms("EUR", unit_amount=Decimal(2000)), actor=SEED_ACTOR, nickname=NICKNAME,
        tax_behavior=TaxBehavior.EXCLUSIVE)
    account = demo_customer(EMAIL)
    if any(s.is_live and s.PriceId == price.PriceId for s in access.get_subscriptions_by_account(account.account_id)):
        return [f"VAT added: {EMAIL} has {SKU} {price.PriceId} already"]
    card = default_card(account)
    started = subscribing.subscribe_to_price(
        account, product, choose_price(price, product), payment_day=today.day, card=access_token(card), today=today,
        actor=EMAIL, billing_address=card.Details.BillingAddress, card_id=card.card_id, trial=False)
    state = f"{started.outcome.amount / 100:.2f} EUR charged" if started.started else "did not start"
    return [f"VAT added: {EMAIL}'s {NAME} at {price.PriceId} (€20.00 a month, VAT added): {state}"]
