"""The writes after checkout: shipments (stock leaves on shipment), cancellations and
refunds (stock and gift-card money back in one transaction; the card refund is recorded
once the gateway has made it, with a journal entry in between for the reconcile command).
"""

from __future__ import annotations

import hashlib

from core.payments.gateway import RefundResult
from shop.access.checkout_writes import journal_entry, put_back
from shop.access.orders import OrderDetails
from shop.access.transactions import LabelledWrite
from shop.models import (
    Order,
    OrderStatus,
    Payment,
    PaymentStatus,
    PaymentType,
    Shipment,
    ShipmentItem,
    ShipmentStatus,
    WarehouseItem,
)


def _order_keys(order: Order) -> dict[str, str]:
    return {"order_id": order.order_id, "customer_id": order.customer_id, "placed_at": order.PlacedAt}


def shipment_id_for(order_id: str, warehouse_id: str) -> str:
    """One shipment per order and warehouse: an id derived from both makes creating them
    idempotent (a hash, so it stays as short as any id)."""
    return hashlib.sha256(f"{order_id}:{warehouse_id}".encode()).hexdigest()[:16]


def create_shipments(details: OrderDetails, created_at: str) -> list[Shipment]:
    """A shipment per warehouse the order's picks come from (those not created yet), with
    its items, in one transaction, only while the order is paid and not closed."""
    order = details.order
    existing = {s.WarehouseId for s in details.shipments if s.Status != ShipmentStatus.CANCELLED}
    contents: dict[str, list[tuple[str, int]]] = {}
    for item in details.items:
        for pick in item.Picks:
            if pick.WarehouseId not in existing:
                contents.setdefault(pick.WarehouseId, []).append((item.ProductId, pick.Quantity))
    if not contents:
        return []
    tx = LabelledWrite()
    tx.check(("order",), order, (Order.Status.is_in(OrderStatus.PAID, OrderStatus.PARTIALLY_SHIPPED))
             & (Order.Version == order.Version))
    created = []
    for warehouse_id, lines in sorted(contents.items()):
        shipment_id = shipment_id_for(order.order_id, warehouse_id)
        shipment = Shipment(
            **Shipment.keys(shipment_id=shipment_id, warehouse_id=warehouse_id, created_at=created_at,
                            **_order_keys(order)),
            OrderId=order.order_id, WarehouseId=warehouse_id, Address=order.ShippingAddress,
            Type=order.ShipmentType, Status=ShipmentStatus.CREATED, CreatedAt=created_at,
        )
        tx.put(("shipment", shipment_id), shipment, condition=Shipment.PK.does_not_exist())
        for product_id, quantity in lines:
            tx.put(("shipment_item", shipment_id, product_id), ShipmentItem(
                **ShipmentItem.keys(shipment_id=shipment_id, product_id=product_id, **_order_keys(order)),
                OrderId=order.order_id, ShipmentId=shipment_id, ProductId=product_id, WarehouseId=warehouse_id,
                Quantity=quantity,
            ))
        created.append(shipment)
    tx.commit()
    return created


def mark_shipped(details: OrderDetails, shipment: Shipment, carrier: str, tracking_number: str, at: str) -> None:
    """The shipment left: its units leave the warehouse (on hand and reserved both drop),
    and the order becomes shipped when no other shipment waits, partially shipped otherwise."""
    order = details.order
    others_waiting = any(s.Status == ShipmentStatus.CREATED and s.SK != shipment.SK for s in details.shipments)
    picked = {(i.ProductId, p.WarehouseId) for i in details.items for p in i.Picks}
    in_shipments = {(i.ProductId, i.WarehouseId) for i in details.shipment_items
                    if any(s.shipment_id == i.ShipmentId and s.Status != ShipmentStatus.CANCELLED
                           for s in details.shipments)}
    done = not others_waiting and picked <= in_shipments
    tx = LabelledWrite()
    tx.update(("shipment",), shipment, [Shipment.Status.set(ShipmentStatus.SHIPPED), Shipment.Carrier.set(carrier),
                                        Shipment.TrackingNumber.set(tracking_number), Shipment.ShippedAt.set(at)],
              condition=Shipment.Status == ShipmentStatus.CREATED)
    for item in details.shipment_items:
        if item.ShipmentId == shipment.shipment_id:
            stock = WarehouseItem(**WarehouseItem.keys(product_id=item.ProductId, warehouse_id=item.WarehouseId))
            tx.update(("stock", item.ProductId, item.WarehouseId), stock,
                      [WarehouseItem.OnHand.add(-item.Quantity), WarehouseItem.Reserved.add(-item.Quantity)],
                      condition=WarehouseItem.Reserved >= item.Quantity)
    status = OrderStatus.SHIPPED if done else OrderStatus.PARTIALLY_SHIPPED
    tx.update(("order",), order, [Order.Status.set(status)],
              condition=Order.Status.is_in(OrderStatus.PAID, OrderStatus.PARTIALLY_SHIPPED))
    tx.commit()
    order.Status = status


def close_order(details: OrderDetails, kind: str, at: str, actor: str = "system") -> None:
    """Cancel (nothing shipped) or refund (goods returned) an order in one transaction:
    status, stock, gift card (and its ledger entry, naming ``actor``), code, unshipped
    shipments; and a journal entry when a card refund is still to be made."""
    order = details.order
    status = OrderStatus.CANCELLED if kind == "cancel" else OrderStatus.REFUNDED
    tx = LabelledWrite()
    tx.update(("order",), order, [Order.Status.set(status), Order.ClosedAt.set(at)],
              condition=Order.Status.is_in(*OrderStatus.OPEN))
    put_back(tx, details, kind=kind, actor=actor)
    for shipment in details.shipments:
        if shipment.Status == ShipmentStatus.CREATED:
            tx.update(("shipment", shipment.SK), shipment, [Shipment.Status.set(ShipmentStatus.CANCELLED)],
                      condition=Shipment.Status == ShipmentStatus.CREATED)
    if card_payment(details) is not None:
        tx.put(("journal",), journal_entry(order.order_id, kind, at))
    tx.commit()
    order.Status, order.ClosedAt = status, at


def card_payment(details: OrderDetails) -> Payment | None:
    """The order's card payment, if one was made and is not refunded yet."""
    for payment in details.payments:
        if payment.Type == PaymentType.CARD and payment.Status == PaymentStatus.SUCCEEDED and payment.ChargeId:
            return payment
    return None


def record_card_refund(details: OrderDetails, kind: str, refund: RefundResult) -> None:
    """The gateway refunded the card: the payment says so and the journal entry goes."""
    payment = card_payment(details)
    tx = LabelledWrite()
    if payment is not None:
        tx.update(("payment",), payment, [Payment.Status.set(PaymentStatus.REFUNDED),
                                          Payment.RefundedAmount.set(refund.amount),
                                          Payment.RefundId.set(refund.refund_id)],
                  condition=Payment.Status == PaymentStatus.SUCCEEDED)
    tx.delete(("journal",), journal_entry(details.order.order_id, kind, details.order.ClosedAt))
    tx.commit()
