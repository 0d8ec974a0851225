"""Bulk test data for the batch tests: many due subscriptions written with BatchWriteItem."""

from __future__ import annotations

from datetime import date, timedelta

from billing import access
from billing.gateway import CardToken, get_gateway
from billing.models import PaymentDetails, Subscription, SubscriptionStatus

GOOD_NUMBER = "4242424242424242"
DECLINED_NUMBER = "4000000000000002"


def card(number: str = GOOD_NUMBER) -> CardToken:
    """A token the simulated gateway knows (each test has its own ledger)."""
    return get_gateway().tokenize_card(number, 12, 2030, "123")


def due_subscription(
    n: int,
    *,
    due: date,
    payment_day: int | None = None,
    card: CardToken,
    amount: int = 999,
    currency: str = "USD",
    reminder: date | None = None,
    prefix: str = "s",
) -> Subscription:
    """A live subscription (own account) due to pay on ``due``, reminded 7 days before."""
    account_id = f"acct{prefix}{n:06d}"
    return Subscription(
        Subscription.pk(account_id=account_id),
        Subscription.sk(sub_id=f"{prefix}{n:06d}", sku="NEWS-DAILY"),
        Email=f"{prefix}{n:06d}@example.com",
        SKU="NEWS-DAILY",
        ProductName="Daily News",
        PaymentDay=payment_day or due.day,
        PaymentAmount=amount,
        Currency=currency,
        NextPaymentDate=due.isoformat(),
        LastPaymentDate=(due - timedelta(days=31)).isoformat(),
        NextReminderDate=(reminder or due - timedelta(days=7)).isoformat(),
        LastReminderDate=(due - timedelta(days=38)).isoformat(),
        PaymentDetails=PaymentDetails(Token=card.token, Brand=card.brand, Last4=card.last4,
                                      ExpMonth=card.exp_month, ExpYear=card.exp_year),
        CreatedDate="2026-01-01T00:00:00+00:00",
        Status=SubscriptionStatus.ACTIVE,
        RetryCount=0,
        Version=1,
    )


def seed_due(count: int, *, due: date, prefix: str = "s", number: str = GOOD_NUMBER, **kwargs) -> list[Subscription]:
    token = card(number)
    subs = [due_subscription(n, due=due, prefix=prefix, card=token, **kwargs) for n in range(count)]
    access.batch_items(subs)
    return subs


def fresh(sub: Subscription) -> Subscription:
    got = access.get_subscription(sub.account_id, sub.sub_id, sub.SKU)
    assert got is not None
    return got


def receipts_of(sub: Subscription) -> list:
    return [r for r in access.get_receipts_by_account(sub.account_id, date(2000, 1, 1), date(2100, 1, 1))
            if r.SubId == sub.sub_id]
