"""Bulk test data for the batch tests: many due subscriptions written with BatchWriteItem."""

from __future__ import annotations

from datetime import date
from typing import Any

from billing import access
from billing.gateway import CardToken, get_gateway
from billing.models import Subscription

GOOD_NUMBER = "4242424242424242"
DECLINED_NUMBER = "4000000000000002"


def card(number: str = GOOD_NUMBER) -> CardToken:
    """A token the simulated gateway knows (each test has its own ledger)."""
    return get_gateway().tokenize_card(number, 12, 2030, "123")


def due_subscription(
    n: int, *, due: date, card: CardToken, prefix: str = "s", **kwargs: Any
) -> Subscription:
    """A live subscription (own account) due to pay on ``due``, reminded 7 days before."""
    sub_id = f"{prefix}{n:06d}"
    return access.due_subscription(f"acct{sub_id}", sub_id, due=due, card=access.payment_details_from(card),
                                   email=f"{sub_id}@example.com", **kwargs)


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
            if r.sub_id == sub.sub_id]
