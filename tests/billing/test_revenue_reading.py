"""The revenue's reads (billing/analytics/reading.py): each account's item collection is one
Query, read several at once (``REVENUE_READ_WORKERS``) and handed on in the accounts'
order, so a recomputation is the same whatever the number of readers."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from billing import access
from billing.analytics.reading import account_collections
from tests.builders import make_account, make_subscription

pytestmark = pytest.mark.django_db


def test_collections_read_at_once_come_in_the_accounts_order_one_query_each(table, ddb_requests) -> None:
    ids = [make_subscription(make_account(f"r{n}@example.com")).account_id for n in range(37)]
    ids.append("no-such-account")  # an id without items: an empty collection, as read alone
    alone = [(i, c.account.account_id if c.account else None, [s.sub_id for s in c.subscriptions])
             for i, c in account_collections(ids, workers=1)]
    ddb_requests.reset()
    side_by_side = [(i, c.account.account_id if c.account else None, [s.sub_id for s in c.subscriptions])
                    for i, c in account_collections(iter(ids), workers=3)]
    assert side_by_side == alone and [i for i, *_ in alone] == ids
    assert alone[-1][1:] == (None, []) and all(len(subs) == 1 for _, _, subs in alone[:-1])
    assert ddb_requests.by_name() == Counter({"Query": len(ids)})


@pytest.mark.parametrize("workers", [1, 2])
def test_the_readers_are_the_setting_s(table, settings, monkeypatch, workers) -> None:
    settings.REVENUE_READ_WORKERS = workers
    readers: list[str] = []

    def read(account_id: str) -> access.AccountCollection:
        readers.append(threading.current_thread().name)
        return access.AccountCollection()

    monkeypatch.setattr(access, "get_account_collection", read)
    assert [i for i, _ in account_collections(["a", "b", "c"])] == ["a", "b", "c"]
    assert all(name.startswith("revenue-read") == (workers > 1) for name in readers) and len(readers) == 3
