"""The shop's part of an account's data rights (docs/incoming/rights.md), registered with
billing through its seam (``billing.customers.register_account_data``): the export reads the
customer item and the orders by the shop's own keys; closing deletes the customer item."""

from __future__ import annotations

import json
from typing import Any

from billing.customers import AccountData
from shop import access

# Every order of one customer: the history index is one Query (the shop pages 50 at a time).
MAX_ORDERS = 10_000


def _plain(item: Any, *, without: tuple[str, ...] = ()) -> dict[str, Any]:
    data = {k: v for k, v in item.to_simple_dict().items() if k not in without}
    return json.loads(json.dumps(data, default=str))


def export_customer(customer_id: str) -> dict[str, Any]:
    customer = access.get_customer_by_customer_id(customer_id)
    orders = access.get_orders_by_customer_id(customer_id, limit=MAX_ORDERS)
    return {
        "customer": _plain(customer) if customer else None,
        # the card as brand and last four digits, never the processor's token
        "orders": [_plain(order, without=("CardToken",)) for order in orders],
    }


SHOP_DATA = AccountData(name="shop", export=export_customer, erase=access.forget_customer)
