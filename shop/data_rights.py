"""The shop's part of an account's data rights (docs/PORTAL.md, "Your data"), registered with
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


def _order(order_id: str) -> dict[str, Any] | None:
    """One order with its lines, invoice, payments and shipments (one Query of its partition)."""
    details = access.get_order_details_by_order_id(order_id)
    if details is None or details.order is None:
        return None
    return {
        # the card as brand and last four digits, never the processor's token
        "order": _plain(details.order, without=("CardToken",)),
        "lines": [_plain(i) for i in details.items],
        "invoice": _plain(details.invoice) if details.invoice else None,
        "payments": [_plain(p) for p in details.payments],
        "shipments": [_plain(s) for s in details.shipments],
    }


def export_customer(customer_id: str) -> dict[str, Any]:
    customer = access.get_customer_by_customer_id(customer_id)
    orders = access.get_orders_by_customer_id(customer_id, limit=MAX_ORDERS)
    return {
        "customer": _plain(customer) if customer else None,
        "orders": [found for order in orders if (found := _order(order.order_id)) is not None],
    }


SHOP_DATA = AccountData(name="shop", export=export_customer, erase=access.forget_customer)
