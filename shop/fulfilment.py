"""After checkout: shipments, cancellations and refunds (orchestration over access and
the gateway). Each card refund has its own idempotency key, ``<orderId>:<kind>:card``."""

from __future__ import annotations

import contextlib

from django.utils.translation import gettext as _

from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from shop import faults
from shop.access import fulfilment_writes as writes
from shop.access.orders import OrderDetails, get_order_details_by_order_id
from shop.access.shipments import get_shipment_details_by_shipment_id
from shop.access.transactions import Cancelled
from shop.clock import iso, utc_now
from shop.errors import InvalidInput, NotFound, OrderStateError, PaymentPending, ShopError
from shop.ids import check_id
from shop.labels import status_in_sentence
from shop.models import Order, OrderStatus, Shipment, ShipmentStatus


def _details(order_id: str) -> OrderDetails:
    details = get_order_details_by_order_id(check_id(order_id, "order id"), consistent=True)
    if details is None:
        raise NotFound(_("There is no order %(order)s.") % {"order": order_id})
    return details


def create_shipments(order_id: str) -> list[Shipment]:
    """One shipment per warehouse the order is picked from (idempotent)."""
    details = _details(order_id)
    if details.order.Status not in (OrderStatus.PAID, OrderStatus.PARTIALLY_SHIPPED):
        raise OrderStateError(_("Order %(order)s is %(status)s: nothing to ship.") % {
            "order": order_id, "status": status_in_sentence(details.order.Status)})
    try:
        return writes.create_shipments(details, iso(utc_now()))
    except Cancelled as error:
        raise OrderStateError(_("The order changed meanwhile: reload it and try again.")) from error


def mark_shipped(shipment_id: str, carrier: str, tracking_number: str) -> Shipment:
    """Record that a shipment left with a carrier; its stock leaves the warehouse."""
    found = get_shipment_details_by_shipment_id(check_id(shipment_id, "shipment id"))
    if found is None:
        raise NotFound(_("There is no shipment %(shipment)s.") % {"shipment": shipment_id})
    carrier, tracking_number = (carrier or "").strip(), (tracking_number or "").strip()
    if not carrier or not tracking_number or len(carrier) > 100 or len(tracking_number) > 100:
        raise InvalidInput(_("A carrier and a tracking number (up to 100 characters) are needed."))
    details = _details(found.shipment.OrderId)
    shipment = next(s for s in details.shipments if s.shipment_id == shipment_id)
    if shipment.Status != ShipmentStatus.CREATED:
        raise OrderStateError(_("Shipment %(shipment)s is %(status)s.") % {
            "shipment": shipment_id, "status": status_in_sentence(shipment.Status)})
    try:
        writes.mark_shipped(details, shipment, carrier, tracking_number, iso(utc_now()))
    except Cancelled as error:
        raise OrderStateError(_("The shipment or its order changed meanwhile: reload and try again.")) from error
    shipment.Status, shipment.Carrier, shipment.TrackingNumber = ShipmentStatus.SHIPPED, carrier, tracking_number
    return shipment


def cancel_order(order_id: str, actor: str = "system") -> Order:
    """Cancel an order nothing of which has shipped: stock released, money back.
    ``actor`` (the staff member) is named in the gift card's ledger."""
    details = _details(order_id)
    if details.order.Status != OrderStatus.PAID or any(s.Status == ShipmentStatus.SHIPPED for s in details.shipments):
        raise OrderStateError(_("Order %(order)s is %(status)s: only a paid order not yet shipped can be "
                                "cancelled (refund it once it is back).") % {
            "order": order_id, "status": status_in_sentence(details.order.Status)})
    return _close(details, "cancel", actor)


def refund_order(order_id: str, actor: str = "system") -> Order:
    """Refund a shipped (or partly shipped) order whose goods came back: stock on hand
    again, the unshipped rest released, money back to the card and the gift card."""
    details = _details(order_id)
    if details.order.Status not in (OrderStatus.SHIPPED, OrderStatus.PARTIALLY_SHIPPED):
        raise OrderStateError(_("Order %(order)s is %(status)s: cancel it instead, or it is closed.") % {
            "order": order_id, "status": status_in_sentence(details.order.Status)})
    return _close(details, "refund", actor)


def _close(details: OrderDetails, kind: str, actor: str) -> Order:
    try:
        writes.close_order(details, kind, iso(utc_now()), actor)
    except Cancelled as error:
        raise OrderStateError(_("The order changed meanwhile: reload it and try again.")) from error
    faults.step("closed")
    # The order as read before the close serves the card refund: the close leaves the card
    # payment as it was (still to refund) and sets the order's ClosedAt in memory too, so
    # a second read would find nothing new (one Query less per cancel or refund).
    _refund_card(details, kind)
    return details.order


def finish_refund(order_id: str, kind: str) -> None:
    """Refund the card of a cancelled or refunded order, once (the key is
    ``<orderId>:<kind>:card``), and record it. The reconcile command calls it again for
    an order a crash left between its transaction and the gateway."""
    _refund_card(_details(order_id), kind)


def _refund_card(details: OrderDetails, kind: str) -> None:
    order_id = details.order.order_id
    payment = writes.card_payment(details)
    if payment is None:
        return
    try:
        refund = get_gateway().refund(payment.ChargeId, payment.Amount, idempotency_key=f"{order_id}:{kind}:card",
                                      reason=kind)
    except GatewayError as error:
        raise PaymentPending(order_id) from error
    if refund.status != "succeeded":
        raise ShopError(_("The gateway refused the refund of order %(order)s: %(reason)s") % {
            "order": order_id, "reason": refund.reason})
    with contextlib.suppress(Cancelled):  # recorded by another process meanwhile
        writes.record_card_refund(details, kind, refund)
