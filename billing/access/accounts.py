"""Accounts and their link to Django users: create and read an account, read its whole
item collection in one Query (the dashboard), and the staff table overview built on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from billing.models import Account, AuditEvent, BillingItem, Receipt, Subscription, UserLink

from ._common import _expired, iso_now, new_id, utc_now
from .catalog import list_products


def create_account(email: str, *, user_id: int | None = None, name: str = "") -> Account:
    """A new account with a random id, and its link to the Django user if given."""
    account_id = new_id()
    account = Account(
        Account.pk(account_id=account_id),
        Account.sk(account_id=account_id),
        Email=email,
        Name=name or None,
        UserId=user_id,
        CreatedDate=iso_now(),
    )
    account.save(condition=Account.PK.does_not_exist())
    if user_id is not None:
        link_user(user_id, account_id, email)
    return account


def link_user(user_id: int, account_id: str, email: str) -> UserLink:
    link = UserLink(
        UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id),
        AccountId=account_id, Email=email,
    )
    link.save()
    return link


def get_account(account_id: str) -> Account | None:
    try:
        return Account.get(Account.pk(account_id=account_id), Account.sk(account_id=account_id))
    except DoesNotExist:
        return None


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

    @property
    def live_subscriptions(self) -> list[Subscription]:
        return [s for s in self.subscriptions if s.is_live]


def get_account_collection(account_id: str, *, now: datetime | None = None) -> AccountCollection:
    """Account, subscriptions, unexpired receipts and events in one Query of the partition."""
    now = now or utc_now()
    collection = AccountCollection()
    for item in BillingItem.query(Account.pk(account_id=account_id)):
        if isinstance(item, Account):
            collection.account = item
        elif isinstance(item, Subscription):
            collection.subscriptions.append(item)
        elif isinstance(item, Receipt):
            if not _expired(item, now):
                collection.receipts.append(item)
        elif isinstance(item, AuditEvent):
            collection.events.append(item)
    collection.receipts.reverse()  # newest first: SKs sort by billing date
    collection.events.reverse()
    return collection


@dataclass
class TableOverview:
    products: int = 0
    accounts: int = 0
    subscriptions: int = 0
    live_subscriptions: int = 0
    receipts: int = 0
    rows: list[dict] = field(default_factory=list)


def table_overview(user_ids: Iterable[int]) -> TableOverview:
    """Counts for the given users' accounts: one GetItem + one Query per account (no Scan)."""
    overview = TableOverview(products=len(list_products(include_retired=True)))
    for user_id in user_ids:
        account_id = get_account_id_for_user(user_id)
        if not account_id:
            continue
        collection = get_account_collection(account_id)
        overview.accounts += 1
        overview.subscriptions += len(collection.subscriptions)
        overview.live_subscriptions += len(collection.live_subscriptions)
        overview.receipts += len(collection.receipts)
        overview.rows.append({
            "account_id": account_id,
            "email": collection.account.Email if collection.account else "",
            "subscriptions": len(collection.subscriptions),
            "receipts": len(collection.receipts),
        })
    return overview
