"""The shop's e-mails (order confirmation, shipped, refund), sent through billing's one
mail module: best effort, a mail failure never undoes the order, shipment or refund."""

from __future__ import annotations

from typing import Any

from billing import access as billing_access
from billing.mail import send_customer_email
from billing.money import format_with_code
from shop.access import OrderDetails
from shop.models import Order, Shipment


def customer_email(customer_id: str) -> str | None:
    """A shop customer is an rpay account: its e-mail (one GetItem)."""
    account = billing_access.get_account(customer_id)
    return account.Email if account else None


def order_context(order: Order, details: OrderDetails | None) -> dict[str, Any]:
    items = details.items if details else []
    return {
        "order_id": order.order_id,
        "lines": [{"name": i.Name, "quantity": i.Quantity, "total": format_with_code(i.Price * i.Quantity, i.Currency)}
                  for i in items],
        "subtotal": format_with_code(order.Subtotal, order.Currency),
        "discount": format_with_code(order.Discount, order.Currency) if order.Discount else "",
        "gift_card": format_with_code(order.GiftCardAmount, order.Currency) if order.GiftCardAmount else "",
        "card": format_with_code(order.CardAmount, order.Currency) if order.CardAmount else "",
        "card_last4": order.CardLast4 or "",
        "total": format_with_code(order.Total, order.Currency),
        "order_path": f"/shop/orders/{order.order_id}/",
    }


def send_order_confirmation(to: str | None, order: Order, details: OrderDetails | None) -> str:
    if not to:
        return "mail: no address"
    return send_customer_email("shop_order_confirmation", to, f"Your order {order.order_id}",
                               order_context(order, details))


def send_shipped(order: Order, shipment: Shipment) -> str:
    to = customer_email(order.customer_id)
    if not to:
        return "mail: no address"
    context = {**order_context(order, None), "carrier": shipment.Carrier, "tracking_number": shipment.TrackingNumber}
    return send_customer_email("shop_shipped", to, f"Order {order.order_id} is on its way", context)


def send_refund(order: Order, kind: str) -> str:
    to = customer_email(order.customer_id)
    if not to:
        return "mail: no address"
    what = "cancelled" if kind == "cancel" else "refunded"
    context = {**order_context(order, None), "what": what}
    return send_customer_email("shop_refund", to, f"Order {order.order_id} {what}: your money is on its way back",
                               context)
