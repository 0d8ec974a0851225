"""Builders for test data, written through the access layer (no tests, no fixtures here:
the shared fixtures, the cast of customers, live in conftest.py).

* accounts and subscriptions: ``make_account``, ``make_subscription``, ``TEST_CARD``
* many due subscriptions for the batch tests: ``seed_due``, ``card``, ``fresh``, ``receipts_of``
* a logged-in portal customer: ``make_customer`` (``Customer``), ``subscribe``
* staff users and a customer with a history: ``make_user``, ``make_customer_with_history``
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from billing import access
from billing.models import Account, Receipt, Subscription, SubscriptionStatus
from core.pages import today
from core.payments.gateway import CardToken, get_gateway

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


def at_once(run: Callable[[], Any], times: int = 2) -> list[Any]:
    """Call ``run`` from ``times`` threads released together (two batch runs at once);
    returns their results. An exception in a thread fails the test."""
    barrier = threading.Barrier(times)
    results: list[Any] = []
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(run())
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def fresh(sub: Subscription) -> Subscription:
    got = access.get_subscription(sub.account_id, sub.sub_id, sub.SKU)
    assert got is not None
    return got


def receipts_of(sub: Subscription) -> list:
    return [r for r in access.get_receipts_by_account(sub.account_id, date(2000, 1, 1), date(2100, 1, 1))
            if r.sub_id == sub.sub_id]


PASSWORD = "a-long-Password-2026"
# The subscribe form's billing country (required): the 4242 card's own country, so the
# tax evidence agrees. Part of GOOD_CARD, which every subscribe post of the tests sends
# (the other card forms ignore it).
BILLING_COUNTRY = {"billing_country": "US"}
GOOD_CARD = {"card_number": "4242 4242 4242 4242", "exp_month": "12", "exp_year": "2030", "cvc": "123",
             **BILLING_COUNTRY}


@dataclass
class Customer:
    client: Client
    email: str
    user_id: int
    account_id: str


def make_customer(email: str) -> Customer:
    user = get_user_model().objects.create_user(email, email=email, password=PASSWORD)
    account = access.create_account(email, user_id=user.pk)
    client = Client()
    response = client.post("/login/", {"username": email, "password": PASSWORD})
    assert response.status_code == 302, response.content
    return Customer(client, email, user.pk, account.account_id)


def subscribe(customer: Customer, sku: str = "NEWS-DAILY", day: int = 15, amount: int = 999,
              currency: str = "USD", on: date | None = None) -> Subscription:
    """A subscription made through the access layer (setup for manage/receipt tests)."""
    account = access.get_account(customer.account_id)
    return access.create_subscription(
        account, sku=sku, payment_day=day, amount=amount, currency=currency, card=TEST_CARD,
        today=on or today(), reminder_days_before=7, product_name=sku.title(),
    )


CLERK_ROLES = ("support", "catalog")


def _recreate_roles() -> None:
    """The roles' groups come from a data migration; a test on ``transactional_db`` (the
    browser tests' live server) flushes them after it, so the next one makes them again
    with the migration's own function."""
    import importlib
    from types import SimpleNamespace

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("billing.migrations.0003_staff_roles")
    migration.create_roles(apps, SimpleNamespace(connection=connection))
    admin_role = importlib.import_module("billing.migrations.0004_admin_role")
    admin_role.create_admin_role(apps, SimpleNamespace(connection=connection))


def make_user(username: str, *, staff: bool = False, money: bool = False, roles: Iterable[str] | None = None):
    """A Django user. Staff get role groups (billing/migrations/0003_staff_roles.py):
    ``roles`` exactly, or by default the clerk's support and catalog roles (every staff
    page but the money actions); ``money=True`` adds the finance role."""
    user = get_user_model().objects.create_user(username, email=username, password="pw-for-tests")
    user.is_staff = staff
    user.save()
    names = set(CLERK_ROLES if roles is None and staff else roles or ())
    if money:
        names.add("finance")
    if names and Group.objects.filter(name__in=names).count() < len(names):
        _recreate_roles()
    user.groups.set(Group.objects.filter(name__in=names))
    assert user.groups.count() == len(names), f"no such role among {sorted(names)}"
    return user


@dataclass
class CustomerWithHistory:
    user: object
    account: Account
    sub: Subscription  # active
    past_due: Subscription
    cancelled: Subscription
    receipt: Receipt  # paid through the simulated gateway: refundable

    @property
    def account_id(self) -> str:
        return self.account.account_id


def make_past_due(sub: Subscription, period: str) -> Subscription:
    return access.update_subscription(sub, [
        Subscription.Status.set(SubscriptionStatus.PAST_DUE),
        Subscription.BillingPeriod.set(period),
        Subscription.RetryCount.set(1),
    ])


def make_customer_with_history(email: str = "pat@example.com") -> CustomerWithHistory:
    user = make_user(email)
    account = make_account(email, user_id=user.pk)
    today_ = today()
    sub = make_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, today=today_)
    past_due = make_past_due(
        make_subscription(account, sku="GYM-CITY", payment_day=3, amount=4500, currency="GBP", today=today_),
        (today_ - timedelta(days=2)).isoformat(),
    )
    cancelled = make_subscription(account, sku="CLOUD-200", payment_day=20, amount=299, currency="EUR", today=today_)
    access.cancel_subscription(cancelled)

    gateway = get_gateway()
    card = gateway.tokenize_card("4242424242424242", 12, today_.year + 3, "123")
    billed = today_ - timedelta(days=10)
    charge = gateway.charge(card.token, 999, "USD", idempotency_key=f"{sub.sub_id}:{billed.isoformat()}")
    assert charge.succeeded
    receipt, _ = access.create_receipt(sub, billing_date=billed, amount=999, currency="USD",
                                       charge_id=charge.charge_id, retention_days=settings.RECEIPT_RETENTION_DAYS)
    return CustomerWithHistory(user, account, sub, past_due, cancelled, receipt)


def use_due_shards(count: int) -> None:
    """Give the (empty) test table ``count`` due-index shards, as setup_dynamodb would have
    with ``DUE_SHARDS=count``: the setting and the table's record both."""
    from billing.models import TableMeta

    settings.DUE_SHARDS = count
    TableMeta(TableMeta.pk(), TableMeta.sk(), DueShards=count).save()
    access.forget_due_shard_layout()


def paid_receipt(due: date = date(2027, 3, 15)):
    """A receipt paid by the payment path on ``due`` (its e-mail cleared from the outbox)."""
    from django.core import mail

    from billing.operations import payments

    [sub] = seed_due(1, due=due)
    payments.take_payment(sub, run_date=due)
    [receipt] = receipts_of(sub)
    mail.outbox.clear()
    return receipt


def first_payment_confirmed(sub: Subscription, today: date):
    """The first payment taken as the subscribe page takes it; with the 3-D Secure card
    (its bank asks on-session too: the subscription is incomplete), confirmed with the
    bank and recorded as the confirmation step records it. The outcome (PAID)."""
    # The payment operation imports Django settings: here, not at the top.
    from billing.operations import payments
    from billing.operations.outcomes import PaymentStatus

    out = payments.take_first_payment(sub, today=today)
    if out.status == PaymentStatus.ACTION_REQUIRED:
        result = get_gateway().authenticate(out.charge_id, approve=True)
        out = payments.record_paid_charge(fresh(sub), result, run_date=today, actor="customer")
    return out


def lose_receipts(monkeypatch: Any) -> None:
    """The engine takes no receipt (an outage between the charge and its receipt)."""
    def lost(*args, **kwargs):
        raise RuntimeError("the receipt was lost")
    monkeypatch.setattr(access, "create_receipt", lost)


def prices_exclude_vat() -> None:
    """An Italian seller whose prices are before VAT (22% on top for an Italian buyer)."""
    from billing.actions.seller import change_seller_profile

    change_seller_profile(access.get_seller_profile(), legal_name="Rpay S.r.l.", address="Via Roma 1",
                          country="IT", vat_number="IT00743110157", oss_registered=True, under_threshold=False,
                          prices_include_tax=False, registrations={}, actor="test")
