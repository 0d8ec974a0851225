"""Shared set-up for the staff page tests: users with and without the money permission,
and a customer account with live, past-due and cancelled subscriptions and a real charge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from billing import access
from billing.gateway import get_gateway
from billing.models import Account, Receipt, Subscription
from billing.schedule import billing_today

from .factories import make_account, make_subscription


def make_user(username: str, *, staff: bool = False, money: bool = False):
    user = get_user_model().objects.create_user(username, email=username, password="pw-for-tests")
    user.is_staff = staff
    user.save()
    if money:
        user.user_permissions.add(Permission.objects.get(codename="manage_money", content_type__app_label="billing"))
    return user


@dataclass
class Customer:
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
        Subscription.Status.set("past_due"),
        Subscription.BillingPeriod.set(period),
        Subscription.RetryCount.set(1),
    ])


def make_customer(email: str = "pat@example.com") -> Customer:
    user = make_user(email)
    account = make_account(email, user_id=user.pk)
    today = billing_today(settings.BILLING_TIMEZONE)
    sub = make_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, today=today)
    past_due = make_past_due(
        make_subscription(account, sku="GYM-CITY", payment_day=3, amount=4500, currency="GBP", today=today),
        (today - timedelta(days=2)).isoformat(),
    )
    cancelled = make_subscription(account, sku="CLOUD-200", payment_day=20, amount=299, currency="EUR", today=today)
    access.cancel_subscription(cancelled)

    gateway = get_gateway()
    card = gateway.tokenize_card("4242424242424242", 12, today.year + 3, "123")
    billed = today - timedelta(days=10)
    charge = gateway.charge(card.token, 999, "USD", idempotency_key=f"{sub.sub_id}:{billed.isoformat()}")
    assert charge.succeeded
    receipt, _ = access.create_receipt(sub, billing_date=billed, amount=999, currency="USD",
                                       charge_id=charge.charge_id, retention_days=settings.RECEIPT_RETENTION_DAYS)
    return Customer(user, account, sub, past_due, cancelled, receipt)
