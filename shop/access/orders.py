"""Orders, their lines, invoices and payments: patterns 5-11, 15, 16 and order history."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from shop.access._common import all_valid, date_bounds
from shop.models import (
    Invoice,
    Order,
    OrderItem,
    Payment,
    Shipment,
    ShipmentItem,
    ShopItem,
)


@dataclass
class OrderDetails:
    """An order's whole item collection, read with one Query."""

    order: Order | None = None
    items: list[OrderItem] = field(default_factory=list)
    invoice: Invoice | None = None
    payments: list[Payment] = field(default_factory=list)
    shipments: list[Shipment] = field(default_factory=list)
    shipment_items: list[ShipmentItem] = field(default_factory=list)


def get_order_details_by_order_id(order_id: str, *, consistent: bool = False) -> OrderDetails | None:
    """Pattern 5: Query PK = o#<orderId> (order, lines, invoice, payments, shipments)."""
    if not all_valid(order_id):
        return None
    details = OrderDetails()
    for item in ShopItem.query(Order.pk(order_id=order_id), consistent_read=consistent):
        if isinstance(item, Order):
            details.order = item
        elif isinstance(item, OrderItem):
            details.items.append(item)
        elif isinstance(item, Invoice):
            details.invoice = item
        elif isinstance(item, Payment):
            details.payments.append(item)
        elif isinstance(item, Shipment):
            details.shipments.append(item)
        elif isinstance(item, ShipmentItem):
            details.shipment_items.append(item)
    return details if details.order is not None else None


def _order_prefix_query(order_id: str, prefix: str) -> list[ShopItem]:
    if not all_valid(order_id):
        return []
    return list(ShopItem.query(Order.pk(order_id=order_id), ShopItem.SK.startswith(prefix)))


def get_product_by_order_id(order_id: str) -> list[OrderItem]:
    """Pattern 6: Query PK = o#<orderId>, SK begins_with p#."""
    prefix = OrderItem.key_templates["SK"].prefix
    return [i for i in _order_prefix_query(order_id, prefix) if isinstance(i, OrderItem)]


def get_invoice_by_order_id(order_id: str) -> Invoice | None:
    """Pattern 7: Query PK = o#<orderId>, SK begins_with i#."""
    prefix = Invoice.key_templates["SK"].prefix
    found = [i for i in _order_prefix_query(order_id, prefix) if isinstance(i, Invoice)]
    return found[0] if found else None


def get_shipment_by_order_id(order_id: str) -> list[Shipment]:
    """Pattern 8: Query PK = o#<orderId>, SK begins_with sh# (not shp#: items)."""
    prefix = Shipment.key_templates["SK"].prefix
    return [i for i in _order_prefix_query(order_id, prefix) if isinstance(i, Shipment)]


def get_order_by_product_id_for_date_range(product_id: str, first: date, last: date) -> list[OrderItem]:
    """Pattern 9: Query GSI1-PK = p#<productId>, GSI1-SK between the dates (whole last day)."""
    if not all_valid(product_id):
        return []
    pk = OrderItem.key_templates["GSI1PK"].format(product_id=product_id)
    low, high = date_bounds(first, last)
    rows = ShopItem.gsi1.query(pk, ShopItem.GSI1SK.between(low, high))
    return [r for r in rows if isinstance(r, OrderItem)]


def get_invoice_by_invoice_id(invoice_id: str) -> Invoice | None:
    """Pattern 10: Query GSI1-PK = GSI1-SK = i#<invoiceId>."""
    if not all_valid(invoice_id):
        return None
    key = Invoice.key_templates["GSI1PK"].format(invoice_id=invoice_id)
    found = [r for r in ShopItem.gsi1.query(key, ShopItem.GSI1SK == key) if isinstance(r, Invoice)]  # noqa: SIM300 (a PynamoDB condition)
    return found[0] if found else None


def get_payment_by_invoice_id(invoice_id: str) -> list[Payment]:
    """Pattern 11: Query GSI1-PK = i#<invoiceId>, GSI1-SK begins_with pmn# (payments are
    items of their own, as in the seed's facets model)."""
    if not all_valid(invoice_id):
        return []
    pk = Payment.key_templates["GSI1PK"].format(invoice_id=invoice_id)
    rows = ShopItem.gsi1.query(pk, ShopItem.GSI1SK.startswith(Payment.key_templates["GSI1SK"].prefix))
    return [r for r in rows if isinstance(r, Payment)]


def get_invoice_by_customer_id_for_date_range(customer_id: str, first: date, last: date) -> list[Invoice]:
    """Pattern 15: Query GSI2-PK = c#<customerId>, GSI2-SK between i#<first> and i#<last>~."""
    if not all_valid(customer_id):
        return []
    pk = Invoice.key_templates["GSI2PK"].format(customer_id=customer_id)
    low, high = date_bounds(first, last, Invoice.key_templates["GSI2SK"].prefix)
    return [r for r in ShopItem.gsi2.query(pk, ShopItem.GSI2SK.between(low, high)) if isinstance(r, Invoice)]


def get_products_by_customer_id_for_date_range(customer_id: str, first: date, last: date) -> list[OrderItem]:
    """Pattern 16: Query GSI2-PK = c#<customerId>, GSI2-SK between p#<first> and p#<last>~.
    Each line carries its product's name: no second read."""
    if not all_valid(customer_id):
        return []
    pk = OrderItem.key_templates["GSI2PK"].format(customer_id=customer_id)
    low, high = date_bounds(first, last, OrderItem.key_templates["GSI2SK"].prefix)
    return [r for r in ShopItem.gsi2.query(pk, ShopItem.GSI2SK.between(low, high)) if isinstance(r, OrderItem)]


def get_orders_by_customer_id(customer_id: str, limit: int = 50) -> list[Order]:
    """A customer's orders, newest first: Query GSI2-PK = c#<customerId>, GSI2-SK begins_with o#."""
    if not all_valid(customer_id):
        return []
    pk = Order.key_templates["GSI2PK"].format(customer_id=customer_id)
    rows = ShopItem.gsi2.query(pk, ShopItem.GSI2SK.startswith(Order.key_templates["GSI2SK"].prefix),
                               scan_index_forward=False, limit=limit)
    return [r for r in rows if isinstance(r, Order)]
