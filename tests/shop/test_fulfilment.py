"""Shipments, cancellations and refunds: stock and money go where they should."""

from __future__ import annotations

import sqlite3

import pytest
from django.conf import settings

from shop import access
from shop.checkout import checkout
from shop.errors import InvalidInput, NotFound, OrderStateError
from shop.fulfilment import cancel_order, create_shipments, mark_shipped, refund_order
from shop.models import OrderStatus, PaymentStatus, ShipmentStatus
from tests.shop.helpers import build_shop, request, stock
from tests.shop.test_index_keys import assert_all_index_keys, stored


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    access.issue_gift_card("GIFT-1111-2222", 2000, "SEK")
    access.create_discount_code("FIVE", percent_off=5, max_uses=10)
    return shop_table


def place() -> str:
    """album x1 from near, book x5: 3 near + 2 far; 2000 by gift card, the rest by card."""
    order = checkout(request(("album", 1), ("book", 5), gift_card_code="GIFT-1111-2222", discount_code="FIVE"))
    assert order.Status == OrderStatus.PAID
    return order.order_id


def refunds() -> list[tuple]:
    """The simulated gateway's refunds, read from its ledger."""
    with sqlite3.connect(settings.PAYMENT_GATEWAY_LEDGER) as db:
        return db.execute("SELECT idempotency_key, amount, status FROM refunds").fetchall()


def test_shipments_per_warehouse_and_the_order_follows(shop) -> None:
    order_id = place()
    shipments = create_shipments(order_id)
    assert {s.WarehouseId for s in shipments} == {"near", "far"}
    assert create_shipments(order_id) == []  # idempotent
    near = next(s for s in shipments if s.WarehouseId == "near")
    far = next(s for s in shipments if s.WarehouseId == "far")
    details = access.get_shipment_details_by_shipment_id(near.shipment_id)
    assert {(i.ProductId, i.Quantity) for i in details.items} == {("album", 1), ("book", 3)}
    assert [s.shipment_id for s in access.get_shipment_by_warehouse_id("far")] == [far.shipment_id]

    mark_shipped(near.shipment_id, "PostNord", "PN123")
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.PARTIALLY_SHIPPED
    assert stock("album") == {"near": (9, 0, 9)}  # left the warehouse
    assert stock("book") == {"near": (0, 0, 0), "far": (4, 2, 2)}
    with pytest.raises(OrderStateError):
        mark_shipped(near.shipment_id, "PostNord", "PN123")
    mark_shipped(far.shipment_id, "DHL", "DHL9")
    details = access.get_order_details_by_order_id(order_id)
    assert details.order.Status == OrderStatus.SHIPPED
    assert {(s.Carrier, s.TrackingNumber, s.Status) for s in details.shipments} == {
        ("PostNord", "PN123", ShipmentStatus.SHIPPED), ("DHL", "DHL9", ShipmentStatus.SHIPPED)}
    assert stock("book") == {"near": (0, 0, 0), "far": (2, 0, 2)}
    assert_all_index_keys(stored(details.shipments + details.shipment_items))


def test_cancel_puts_stock_and_money_back(shop) -> None:
    order_id = place()
    create_shipments(order_id)
    order = cancel_order(order_id)
    assert order.Status == OrderStatus.CANCELLED
    assert stock("album") == {"near": (10, 0, 10)} and stock("book") == {"near": (3, 0, 3), "far": (4, 0, 4)}
    assert access.get_gift_card("GIFT-1111-2222").Balance == 2000
    assert access.get_discount_code("FIVE").Uses == 0
    details = access.get_order_details_by_order_id(order_id)
    assert {p.Type: p.Status for p in details.payments} == {"GiftCard": PaymentStatus.REFUNDED,
                                                             "Card": PaymentStatus.REFUNDED}
    assert {s.Status for s in details.shipments} == {ShipmentStatus.CANCELLED}
    card = next(p for p in details.payments if p.Type == "Card")
    assert refunds() == [(f"{order_id}:cancel:card", card.Amount, "succeeded")]
    with pytest.raises(OrderStateError):
        cancel_order(order_id)
    assert len(refunds()) == 1


def test_refund_after_shipping_returns_goods_to_stock(shop) -> None:
    order_id = place()
    shipments = create_shipments(order_id)
    near = next(s for s in shipments if s.WarehouseId == "near")
    mark_shipped(near.shipment_id, "PostNord", "PN1")
    with pytest.raises(OrderStateError):
        cancel_order(order_id)  # part of it has left: a refund, not a cancellation
    refund_order(order_id)
    # the shipped units come back on hand; the unshipped ones are released
    assert stock("album") == {"near": (10, 0, 10)}
    assert stock("book") == {"near": (3, 0, 3), "far": (4, 0, 4)}
    assert access.get_gift_card("GIFT-1111-2222").Balance == 2000
    assert [key for key, _, _ in refunds()] == [f"{order_id}:refund:card"]
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.REFUNDED


def test_bad_fulfilment_input(shop) -> None:
    order_id = place()
    [shipment, _] = create_shipments(order_id)
    with pytest.raises(InvalidInput):
        mark_shipped(shipment.shipment_id, "", "X")
    with pytest.raises(NotFound):
        mark_shipped("nosuch", "DHL", "1")
    with pytest.raises(InvalidInput):
        cancel_order("o#1")
    with pytest.raises(NotFound):
        refund_order("nosuch")
