"""The demo's seats (docs/MONEY.md "Seats"): the demo customer's team workspace, five seats
at $10.00 a seat (subscribed with one, four added the same day through the portal's own
action, so their first period is charged and its receipt written). The subscription page
says "$10.00 a seat × 5" and offers "Change the number of seats". Safe to run twice: a
customer who has a live subscription to the product already is left as it is."""

from __future__ import annotations

from datetime import date

from django.contrib.auth import get_user_model

from billing import access
from billing.actions import seats as seat_actions
from billing.actions import subscriptions as subscribing
from billing.actions.accounts import payment_customer
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, DEMO_CARDS, SEED_ACTOR, access_token
from core.payments.demo_cards import demo_card
from core.payments.gateway import get_gateway

SKU, NAME, SEAT_PRICE, CURRENCY = "TEAM-SEATS", "Team workspace", 1000, "USD"  # the prices part's product
SEATS = 5


def seed(today: date) -> list[str]:
    user = get_user_model().objects.filter(email__iexact=CUSTOMER_EMAIL).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    account = access.get_account(account_id) if account_id else None
    if account is None:
        return [f"seats: no demo customer {CUSTOMER_EMAIL}: no seats seeded"]
    if access.get_product(SKU) is None:
        access.create_product(SKU, NAME, SEAT_PRICE, CURRENCY)
    product = access.get_product(SKU)
    assert product is not None
    live = [s for s in access.get_subscriptions_by_account(account.account_id) if s.SKU == SKU and s.is_live]
    if live:
        return [f"seats: {CUSTOMER_EMAIL} has {SKU} already ({live[0].Quantity or 1} seats)"]
    card = access.default_card(account, access.get_cards(account.account_id))  # the wallet's default
    if card is None:
        card = access.add_card(account.account_id, demo_card(get_gateway(), "visa",
                                                             customer=payment_customer(account)),
                               DEMO_CARDS[0][1], actor=SEED_ACTOR)
    started = subscribing.subscribe(
        account, sku=SKU, product_name=product.Name, payment_day=today.day, amount=int(product.PaymentAmount),
        currency=product.Currency, card=access_token(card), today=today, actor=CUSTOMER_EMAIL,
        billing_address=card.Details.BillingAddress, card_id=card.card_id)
    if not started.started:
        return [f"seats: {SKU} for {CUSTOMER_EMAIL} did not start: no seats"]
    sub = access.get_subscription(account.account_id, started.sub.sub_id, SKU) or started.sub
    done = seat_actions.change_quantity(sub, SEATS, CUSTOMER_EMAIL, today=today)
    return [f"seats: {CUSTOMER_EMAIL}'s {NAME}, {SEATS} seats at {SEAT_PRICE / 100:.2f} {CURRENCY} a seat "
            f"({done.charged / 100:.2f} {CURRENCY} charged for the added seats)"]
