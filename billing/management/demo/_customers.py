"""What the demo parts that make a customer of their own share: the log-in (the demo
customer's password) with its account, a default card (a demo Visa at the gateway), and a
subscription to a product's monthly price paid with it, made as the portal makes one;
and what the usage parts share: an event's moment on a billing day.
A private module (its name begins with ``_``): ``seed_parts`` does not run it as a part."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth import get_user_model

from billing import access
from billing.actions import subscriptions as subscribing
from billing.actions.accounts import open_account, payment_customer
from billing.management.commands.seed_demo import CUSTOMER_PASSWORD, DEMO_CARDS, SEED_ACTOR, access_token
from billing.models import Account, Card, Product
from billing.rules.price_choice import choose_price
from billing.rules.usage import day_of
from core.payments.demo_cards import demo_card
from core.payments.gateway import get_gateway


def demo_customer(email: str) -> Account:
    """``email``'s log-in and account, made once (safe to call again)."""
    user, created = get_user_model().objects.get_or_create(username=email, defaults={"email": email})
    if created:  # get_or_create leaves the password "" (usable to Django): set it
        user.set_password(CUSTOMER_PASSWORD)
        user.save()
    return open_account(email, user_id=user.pk)


def default_card(account: Account) -> Card:
    """The account's default card; a demo Visa made its default when it has none."""
    card = access.default_card(account, access.get_cards(account.account_id))
    if card is not None:
        return card
    token = demo_card(get_gateway(), "visa", customer=payment_customer(account))
    return access.add_card(account.account_id, token, DEMO_CARDS[0][1], actor=SEED_ACTOR, make_default=True)


def usage_moment(day: date, hour: int) -> tuple[int, str]:
    """A usage event's Unix seconds at ``hour`` o'clock of the billing day ``day`` (in
    ``BILLING_TIMEZONE``), and the day its aggregate is kept under (``day`` itself)."""
    seconds = int(datetime.combine(day, time(hour), tzinfo=ZoneInfo(settings.BILLING_TIMEZONE)).timestamp())
    return seconds, day_of(seconds, settings.BILLING_TIMEZONE)


def subscribe_monthly(account: Account, product: Product, today: date, actor: str) -> subscribing.Started:
    """``account`` subscribed today to ``product``'s default (monthly) price with its
    default card, no trial, through the portal's own action."""
    card = default_card(account)
    return subscribing.subscribe_to_price(
        account, product, choose_price(access.default_price(product), product), payment_day=today.day,
        card=access_token(card), today=today, actor=actor, billing_address=card.Details.BillingAddress,
        card_id=card.card_id, trial=False)
