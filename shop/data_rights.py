"""The shop's part of an account's data rights (docs/PORTAL.md, "Your data"), registered with
billing through its seam (``billing.customers.register_account_data``): the export reads the
customer item and the orders by the shop's own keys; closing deletes the customer item and
erases every order of the customer (shop/access/data_rights.py): the delivery addresses and
card tokens go, each invoice is kept to the end of its tax retention (the billing side's
``retention_years``), then deleted by its TTL. An order still waiting for its payment is
left to the reconciliation, which erases it once settled (``erase_settled_order``)."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from billing.customers import AccountData, account_closed, invoice_retained_until
from shop import access
from shop.access import data_rights as order_rights
from shop.models import Invoice

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


def invoice_end_of_retention(invoice: Invoice) -> datetime:
    """The end of the invoice's tax retention: the seller country's years after its issue."""
    return invoice_retained_until(date.fromisoformat(invoice.IssuedAt[:10]))


def erase_customer(customer_id: str) -> None:
    """The close's shop part: the customer item, then the personal fields of every order."""
    access.forget_customer(customer_id)
    order_rights.erase_customer_orders(customer_id, invoice_end_of_retention)


def erase_settled_order(order_id: str) -> bool:
    """An order the reconciliation just settled: erased if its customer's account was
    closed while it waited for its payment (the customer item is gone and the account
    carries its close date). True when it was erased."""
    details = access.get_order_details_by_order_id(order_id, consistent=True)
    if details is None or details.order is None:
        return False
    if not account_closed(details.order.customer_id):  # a closed account's item stays, pseudonymised
        return False
    return order_rights.erase_order(details, invoice_end_of_retention)


SHOP_DATA = AccountData(name="shop", export=export_customer, erase=erase_customer)
