"""Accounts and their link to Django users: create and read an account, read its whole
item collection in one Query (the dashboard).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from billing.access._common import (
    absent_if_invalid,
    is_expired,
    iso_now,
    new_id,
    refused_as,
    transact_with_retries,
    utc_now,
)
from billing.exceptions import AlreadyExists, ConditionFailed
from billing.models import Account, AuditEvent, BillingItem, Card, Receipt, Subscription, UserLink


def create_account(email: str, *, user_id: int | None = None, name: str = "",
                   language: str | None = None, account_id: str | None = None,
                   created: str | None = None) -> Account:
    """A new account, and its link to the Django user if given. Its id is random unless
    ``account_id`` is given (demo data that keeps a seed's ids); ``AlreadyExists`` if
    that account exists."""
    account_id = account_id or new_id()
    account = Account(
        Account.pk(account_id=account_id),
        Account.sk(account_id=account_id),
        Email=email,
        Name=name or None,
        UserId=user_id,
        CreatedDate=created or iso_now(),
        Language=language,
    )
    with refused_as(AlreadyExists, account.PK):
        account.save(condition=Account.PK.does_not_exist())
    if user_id is not None:
        link_user(user_id, account_id, email, language=language)
    return account


def create_user_account(email: str, *, user_id: int, language: str | None = None) -> Account:
    """A Django user's account and its ``USER#`` link, in one TransactWriteItems (each only
    if absent): a sign-up that stops anywhere leaves both or neither, so the next one (or
    the user's first portal page) finishes it. ``AlreadyExists`` when the user has a link
    already (another request opened the account meanwhile): read that one."""
    account_id = new_id()
    account = Account(Account.pk(account_id=account_id), Account.sk(account_id=account_id), Email=email,
                      UserId=user_id, CreatedDate=iso_now(), Language=language)
    link = UserLink(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id), AccountId=account_id, Email=email,
                    Language=language)

    def write(tx: object) -> None:
        tx.save(account, condition=Account.PK.does_not_exist())  # type: ignore[attr-defined]
        tx.save(link, condition=UserLink.PK.does_not_exist())  # type: ignore[attr-defined]

    with refused_as(AlreadyExists, link.PK):
        transact_with_retries(write)
    return account


def link_user(user_id: int, account_id: str, email: str, *, language: str | None = None) -> UserLink:
    link = UserLink(
        UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id),
        AccountId=account_id, Email=email, Language=language,
    )
    link.save()
    return link


@absent_if_invalid()
def get_account(account_id: str) -> Account | None:
    try:
        return Account.get(Account.pk(account_id=account_id), Account.sk(account_id=account_id))
    except DoesNotExist:
        return None


def set_stripe_customer(account: Account, customer_id: str) -> str:
    """Store the account's processor customer unless one is stored already (two first
    cards at once: the first write wins and both use its customer). Returns the stored id."""
    try:
        with refused_as(ConditionFailed, account.PK):
            account.update(actions=[Account.StripeCustomerId.set(customer_id)],
                           condition=Account.PK.exists() & Account.StripeCustomerId.does_not_exist())
    except ConditionFailed:
        stored = Account.get(account.PK, account.SK, consistent_read=True)
        account.StripeCustomerId = stored.StripeCustomerId
    return account.StripeCustomerId or customer_id


def get_account_id_for_user(user_id: int) -> str | None:
    try:
        link = UserLink.get(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id))
    except DoesNotExist:
        return None
    return link.AccountId


@dataclass
class AccountCollection:
    """An account's whole item collection, read with one Query (the dashboard)."""

    account: Account | None = None
    subscriptions: list[Subscription] = field(default_factory=list)
    receipts: list[Receipt] = field(default_factory=list)
    events: list[AuditEvent] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)  # the wallet, oldest first

    @property
    def live_subscriptions(self) -> list[Subscription]:
        return [s for s in self.subscriptions if s.is_live]


@absent_if_invalid(AccountCollection)
def get_account_collection(account_id: str, *, now: datetime | None = None) -> AccountCollection:
    """Account, subscriptions, wallet cards, unexpired receipts and events in one Query of the partition."""
    now = now or utc_now()
    collection = AccountCollection()
    for item in BillingItem.query(Account.pk(account_id=account_id)):
        if isinstance(item, Account):
            collection.account = item
        elif isinstance(item, Subscription):
            collection.subscriptions.append(item)
        elif isinstance(item, Receipt):
            if not is_expired(item, now):
                collection.receipts.append(item)
        elif isinstance(item, AuditEvent):
            collection.events.append(item)
        elif isinstance(item, Card):
            collection.cards.append(item)
    collection.receipts.reverse()  # newest first: SKs sort by billing date
    collection.events.reverse()
    collection.cards.sort(key=lambda c: c.CreatedDate)
    return collection
