"""The demo's cadences (docs/MONEY.md "Cadences"): the demo customer's yearly Photo editor
Pro at $120.00 a year, subscribed today on today's day of the month, its first year paid
at once through the portal's own action. The subscription page says "$120.00 a year" and
its next payment a year on. Safe to run twice: a customer who has a live subscription to
the product already is left as it is."""

from __future__ import annotations

from datetime import date

from django.contrib.auth import get_user_model

from billing import access
from billing.actions import subscriptions as subscribing
from billing.actions.accounts import payment_customer
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, DEMO_CARDS, SEED_ACTOR, access_token
from core.payments.demo_cards import demo_card
from core.payments.gateway import get_gateway

# The prices part's product (made here too when absent: the parts run in any order); its
# yearly price is this amount a year.
SKU, NAME, MONTHLY, CURRENCY = "PHOTO-PRO", "Photo editor Pro", 1200, "USD"
YEARLY = 12000


def seed(today: date) -> list[str]:
    user = get_user_model().objects.filter(email__iexact=CUSTOMER_EMAIL).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    account = access.get_account(account_id) if account_id else None
    if account is None:
        return [f"intervals: no demo customer {CUSTOMER_EMAIL}: no yearly subscription seeded"]
    if access.get_product(SKU) is None:
        access.create_product(SKU, NAME, MONTHLY, CURRENCY)
    live = [s for s in access.get_subscriptions_by_account(account.account_id) if s.SKU == SKU and s.is_live]
    if live:
        return [f"intervals: {CUSTOMER_EMAIL} has {SKU} already (next payment {live[0].NextPaymentDate})"]
    cards = access.get_cards(account.account_id)
    card = next((c for c in cards if c.Details.Last4 != "3184"), None)  # not the 3-D Secure card
    if card is None:
        card = access.add_card(account.account_id, demo_card(get_gateway(), "visa",
                                                             customer=payment_customer(account)),
                               DEMO_CARDS[0][1], actor=SEED_ACTOR)
    started = subscribing.subscribe(
        account, sku=SKU, product_name=NAME, payment_day=today.day, amount=YEARLY, currency=CURRENCY,
        card=access_token(card), today=today, actor=CUSTOMER_EMAIL, billing_address=card.Details.BillingAddress,
        card_id=card.card_id, interval="year", interval_count=1)
    if not started.started:
        return [f"intervals: {SKU} yearly for {CUSTOMER_EMAIL} did not start"]
    return [f"intervals: {CUSTOMER_EMAIL}'s {NAME}, {YEARLY / 100:.2f} {CURRENCY} a year, "
            f"next payment {started.sub.NextPaymentDate}"]
