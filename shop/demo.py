"""Demo data for ``seed_demo``: the seed's sample (with its ids), log-ins for its customers,
a real charge behind its card payment, a discount code and a gift card to try."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from billing.customers import ensure_demo_customer
from core.payments.demo_cards import demo_card
from core.payments.gateway import get_gateway
from shop import access
from shop.access.sample import CURRENCY, CUSTOMERS, ORDER_ID
from shop.errors import InvalidInput
from shop.models import ShopItem

DEMO_DISCOUNT_CODE = "WELCOME10"
DEMO_GIFT_CARD = "DEMO-GIFT-CARD-0001"


def shop_table_exists() -> bool:
    return ShopItem.exists()


def seed_shop(password: str) -> list[str]:
    """Load the sample once; return what was done, one line each."""
    lines = []
    for customer_id, email, name in CUSTOMERS:
        if _link_demo_account(customer_id, email, name, password):
            lines.append(f"shop customer c#{customer_id}: log in as {email} / {password}")
    gateway = get_gateway()
    card = demo_card(gateway, "mastercard", exp_year=2040)
    # The sample's card payment was really made (on the simulated gateway), so staff can refund it.
    charge = gateway.charge(card.token, 30000, CURRENCY, idempotency_key=f"{ORDER_ID}:card",
                            metadata={"order_id": ORDER_ID, "source": "shop"})
    if access.load_seed_sample(card_charge_id=charge.charge_id):
        lines.append("shop: the seed's sample loaded (order o#12345, products p#12345 and p#99887, "
                     "warehouses w#12345 and w#12376)")
    try:
        access.create_discount_code(DEMO_DISCOUNT_CODE, percent_off=10, max_uses=100)
        access.issue_gift_card(DEMO_GIFT_CARD, 50000, CURRENCY)
        lines.append(f"shop: discount code {DEMO_DISCOUNT_CODE} (10% off), gift card {DEMO_GIFT_CARD} (500.00 SEK)")
    except InvalidInput:
        pass  # there already
    return lines


def _link_demo_account(customer_id: str, email: str, name: str, password: str) -> bool:
    """A Django user and an rpay account whose AccountId is the seed's customer id (a
    shop customer is an rpay account), and the shop's customer item."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=email, defaults={"email": email})
    if created:
        user.set_password(password)
        user.save()
    return ensure_demo_customer(customer_id, email, name, user.pk)
