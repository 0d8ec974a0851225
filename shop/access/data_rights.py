"""A closed account's shop orders (docs/PORTAL.md, "Your data"): each order's partition read
with one Query (the orders themselves found by the customer's history index, never a Scan),
its personal fields removed item by item with conditional writes that are safe to repeat,
and its invoice given a TTL at the end of its tax retention.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from core.dynamo.erase import update_until_settled
from shop.access.orders import OrderDetails, get_order_details_by_order_id, get_orders_by_customer_id
from shop.models import Invoice, Order, OrderStatus, Shipment, ShopItem

# Every order of one customer: the history index is one paginated Query.
MAX_ORDERS = 100_000

# What identifies the customer on each kind of item of an order: the delivery address and
# the card's processor token. Lines, payments (brand, last four, charge id) and shipment
# items hold none; the invoice holds amounts and dates only, which tax law keeps.
PERSONAL: dict[type[ShopItem], tuple[str, ...]] = {
    Order: ("ShippingAddress", "CardToken"),
    Shipment: ("Address",),
}


def customer_order_ids(customer_id: str) -> list[str]:
    return [order.order_id for order in get_orders_by_customer_id(customer_id, limit=MAX_ORDERS)]


def _remove(item: ShopItem, names: tuple[str, ...]) -> None:
    """Remove ``names`` from ``item``; re-read and try again when a write beside ours (an
    order's Version moved) changed it first; nothing when it is gone."""
    update_until_settled(item, lambda current: [
        current.get_attributes()[n].remove() for n in names if getattr(current, n, None) is not None])


def keep_invoice_until(invoice: Invoice, until: datetime) -> None:
    """Keep the invoice to ``until`` (never earlier than a TTL it had), then let TTL delete it."""
    if invoice.TTL and until <= invoice.TTL:
        return
    invoice.update(actions=[Invoice.TTL.set(until)], condition=Invoice.PK.exists())


def erase_order(details: OrderDetails, invoice_until: Callable[[Invoice], datetime]) -> bool:
    """Remove the personal fields of every item of one order and set its invoice's TTL.
    False (nothing written) for an order still waiting for its payment: the reconciliation
    needs its card token, and erases it once it is settled (``shop.reconcile``)."""
    if details.order is None or details.order.Status == OrderStatus.PENDING_PAYMENT:
        return False
    for item in [details.order, *details.shipments]:
        _remove(item, PERSONAL[type(item)])
    if details.invoice is not None:
        keep_invoice_until(details.invoice, invoice_until(details.invoice))
    return True


def erase_customer_orders(customer_id: str, invoice_until: Callable[[Invoice], datetime]) -> list[str]:
    """Erase every settled order of the customer; the ids of those left waiting for payment."""
    waiting = []
    for order_id in customer_order_ids(customer_id):
        details = get_order_details_by_order_id(order_id, consistent=True)
        if details is not None and not erase_order(details, invoice_until):
            waiting.append(order_id)
    return waiting
