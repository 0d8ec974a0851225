"""Small builders for test data, written through the access layer."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.gateway import CardToken
from billing.models import Account, Subscription

TEST_CARD = CardToken(token="tok_test_visa", brand="Visa", last4="4242", exp_month=12, exp_year=2030)


def make_account(email: str = "pat@example.com", user_id: int | None = None) -> Account:
    return access.create_account(email, user_id=user_id)


def make_subscription(
    account: Account,
    *,
    sku: str = "NEWS-DAILY",
    payment_day: int = 15,
    amount: int = 999,
    currency: str = "USD",
    today: date = date(2027, 1, 10),
    card: CardToken = TEST_CARD,
    reminder_days_before: int = 7,
) -> Subscription:
    return access.create_subscription(
        account, sku=sku, payment_day=payment_day, amount=amount, currency=currency,
        card=card, today=today, reminder_days_before=reminder_days_before, product_name=sku.title(),
    )
