"""The shop's e-mails (order confirmation, shipped, refund), sent through billing's one
mail module: best effort, a mail failure never undoes the order, shipment or refund."""

from __future__ import annotations

from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing.customers import contact
from core.mail import money_text, send_customer_email
from shop.access import OrderDetails
from shop.models import Invoice, Order, Shipment


def customer_email(customer_id: str) -> str | None:
    """A shop customer is an rpay account: its e-mail (one GetItem)."""
    return customer_address(customer_id)[0]


def customer_address(customer_id: str) -> tuple[str | None, str | None]:
    """The account's e-mail and language (one GetItem): staff's e-mails to a customer
    are written in the customer's language."""
    return contact(customer_id)


def order_context(order: Order, details: OrderDetails | None) -> dict[str, Any]:
    items = details.items if details else []
    return {
        "order_id": order.order_id,
        "lines": [{"name": i.Name, "quantity": i.Quantity, "total": money_text(i.Price * i.Quantity, i.Currency)}
                  for i in items],
        "subtotal": money_text(order.Subtotal, order.Currency),
        "discount": money_text(order.Discount, order.Currency) if order.Discount else "",
        "gift_card": money_text(order.GiftCardAmount, order.Currency) if order.GiftCardAmount else "",
        "card": money_text(order.CardAmount, order.Currency) if order.CardAmount else "",
        "card_last4": order.CardLast4 or "",
        "total": money_text(order.Total, order.Currency),
        "order_path": f"/shop/orders/{order.order_id}/",
        **invoice_context(details.invoice if details else None, order.Currency),
    }


def invoice_context(invoice: Invoice | None, currency: str) -> dict[str, Any]:
    """The invoice's seller and VAT, as its page shows them (none on an older invoice)."""
    if invoice is None or invoice.SellerName is None:
        return {}
    return {"seller": invoice.SellerName, "seller_vat": invoice.SellerVatNumber or "",
            "net": money_text(int(invoice.Net or 0), currency), "vat": money_text(int(invoice.Tax or 0), currency),
            "vat_rate": invoice.TaxRate or "0"}


def send_order_confirmation(to: str | None, order: Order, details: OrderDetails | None) -> str:
    if not to:
        return "mail: no address"
    return send_customer_email("shop_order_confirmation", to, format_lazy(_("Your order {order}"), order=order.order_id),
                               order_context(order, details))


def send_shipped(order: Order, shipment: Shipment) -> str:
    to, language = customer_address(order.customer_id)
    if not to:
        return "mail: no address"
    context = {**order_context(order, None), "carrier": shipment.Carrier, "tracking_number": shipment.TrackingNumber}
    return send_customer_email("shop_shipped", to, format_lazy(_("Order {order} is on its way"), order=order.order_id),
                               context, language=language)


def send_refund(order: Order, kind: str) -> str:
    to, language = customer_address(order.customer_id)
    if not to:
        return "mail: no address"
    what = "cancelled" if kind == "cancel" else "refunded"
    context = {**order_context(order, None), "what": what}
    subject = (_("Order {order} cancelled: your money is on its way back") if kind == "cancel"
               else _("Order {order} refunded: your money is on its way back"))
    return send_customer_email("shop_refund", to, format_lazy(subject, order=order.order_id), context,
                               language=language)
