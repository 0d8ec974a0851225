"""The REST API's lists: each page is exactly one Query (never a Scan, never a second
page fetched behind the caller's back), continued from DynamoDB's ``LastEvaluatedKey``.
The API signs that key into its opaque cursor (billing/api/paging.py); this module only
runs the Query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from billing.access._common import is_expired, utc_now
from billing.models import BillingItem, Coupon, DisputeEntry, Product, Receipt, Subscription

Item = TypeVar("Item", bound=BillingItem)
StartKey = dict[str, Any] | None


@dataclass(frozen=True)
class Page(Generic[Item]):
    items: list[Item]
    next_key: StartKey  # DynamoDB's LastEvaluatedKey: None when the list is over


def _one_query(model: type[Item], hash_key: str, condition: Any, *, limit: int, start: StartKey,
               forward: bool = True, filter_condition: Any = None) -> Page[Item]:
    results = model.query(hash_key, condition, filter_condition=filter_condition, scan_index_forward=forward,
                          page_size=limit, last_evaluated_key=start)
    raw = next(results.page_iter)  # one request, whatever the filter kept
    items = [model.from_raw_data(data) for data in raw.get("Items", [])]
    return Page(items, results.page_iter.last_evaluated_key)


def subscriptions_page(account_id: str, *, limit: int, start: StartKey = None) -> Page[Subscription]:
    return _one_query(Subscription, Subscription.pk(account_id=account_id),
                      Subscription.SK.startswith(Subscription.sk_template.prefix), limit=limit, start=start)


def receipts_page(account_id: str, *, limit: int, start: StartKey = None, now: datetime | None = None) -> Page[Receipt]:
    """Newest first, without receipts past their TTL."""
    now = now or utc_now()
    page = _one_query(Receipt, Receipt.pk(account_id=account_id), Receipt.SK.startswith(Receipt.sk_template.prefix),
                      limit=limit, start=start, forward=False,
                      filter_condition=Receipt.TTL.does_not_exist() | (now < Receipt.TTL))
    return Page([r for r in page.items if not is_expired(r, now)], page.next_key)


def products_page(*, limit: int, start: StartKey = None) -> Page[Product]:
    return _one_query(Product, Product.pk(), Product.SK.startswith(Product.sk_template.prefix), limit=limit, start=start)


def coupons_page(*, limit: int, start: StartKey = None) -> Page[Coupon]:
    return _one_query(Coupon, Coupon.pk(), Coupon.SK.startswith(Coupon.sk_template.prefix), limit=limit, start=start)


def disputes_page(*, limit: int, start: StartKey = None) -> Page[DisputeEntry]:
    """Newest opened first."""
    return _one_query(DisputeEntry, DisputeEntry.pk(), None, limit=limit, start=start, forward=False)
