"""A small shop for checkout tests: two warehouses, three products, a customer, a card."""

from __future__ import annotations

from core.payments.gateway import CardToken, get_gateway
from shop import access
from shop.checkout import CheckoutRequest, new_checkout_token
from shop.models import Address, ShopItem

CUSTOMER = "cust1"
HOME = {"Country": "Sweden", "City": "Goteborg", "Street": "Slanbarsvagen", "Number": "34", "ZipCode": "41787"}
GOOD_CARD = "4242424242424242"
DECLINED_CARD = "4000000000000002"


def build_shop() -> None:
    access.create_customer(CUSTOMER, "c1@example.com", "C One")
    access.create_warehouse("near", "Goteborg", Address(Country="Sweden", City="Goteborg", Street="Main",
                                                        ZipCode="41111"))
    access.create_warehouse("far", "Boras", Address(Country="Sweden", City="Boras", Street="River",
                                                    ZipCode="50111"))
    access.create_product("album", "Options Open", 10000, "SEK", "music")
    access.create_product("book", "The Book", 4000, "SEK", "books")
    access.create_product("euro", "Euro thing", 500, "EUR", "misc")
    access.put_stock("album", "near", 10)
    access.put_stock("book", "near", 3)
    access.put_stock("book", "far", 4)
    access.put_stock("euro", "far", 4)


def card(number: str = GOOD_CARD) -> CardToken:
    return get_gateway().tokenize_card(number, 12, 2040, "123")


def request(*lines: tuple[str, int], token: str | None = None, **kwargs) -> CheckoutRequest:
    kwargs.setdefault("card", card())
    return CheckoutRequest(token=token or new_checkout_token(), customer_id=kwargs.pop("customer_id", CUSTOMER),
                           lines=tuple(lines), address=kwargs.pop("address", HOME), **kwargs)


def stock(product_id: str) -> dict[str, tuple[int, int, int]]:
    """warehouse -> (on hand, reserved, available); checks the invariant on the way."""
    out = {}
    for s in access.get_product_inventory_by_product_id(product_id):
        assert s.Available == s.OnHand - s.Reserved and min(s.OnHand, s.Reserved, s.Available) >= 0, s.attribute_values
        out[s.warehouse_id] = (s.OnHand, s.Reserved, s.Available)
    return out


def shop_charges() -> list[dict]:
    return [c for c in get_gateway().charges_made(source="shop") if c["status"] == "succeeded"]


def partition(pk: str) -> list[ShopItem]:
    return list(ShopItem.query(pk, consistent_read=True))


def assert_books_balance(product_ids: tuple[str, ...] = ("album", "book")) -> None:
    """Stock and money agree with the orders, whatever happened:
    reserved units = units of open orders not shipped; every paid order has exactly one
    successful charge of its card amount; every successful charge belongs to a paid (or
    since refunded) order; no journal entry is left."""
    from shop.access.checkout_writes import get_pending_actions
    from shop.models import OrderStatus

    orders = {o.order_id: access.get_order_details_by_order_id(o.order_id, consistent=True)
              for o in access.get_orders_by_customer_id(CUSTOMER, limit=1000)}
    reserved: dict[tuple[str, str], int] = {}
    for details in orders.values():
        if details.order.Status in (OrderStatus.PAID, OrderStatus.PENDING_PAYMENT):
            for item in details.items:
                for pick in item.Picks:
                    key = (item.ProductId, pick.WarehouseId)
                    reserved[key] = reserved.get(key, 0) + pick.Quantity
    for product_id in product_ids:
        for warehouse_id, (_, held, _) in stock(product_id).items():
            assert held == reserved.get((product_id, warehouse_id), 0), (product_id, warehouse_id)
    charges = {c["metadata"]["order_id"]: c for c in shop_charges()}
    for order_id, details in orders.items():
        order = details.order
        if order.Status == OrderStatus.PAID and order.CardAmount:
            assert charges[order_id]["amount"] == order.CardAmount
            assert charges[order_id]["charge_id"] == order.ChargeId
            assert [p.ChargeId for p in details.payments if p.Type == "Card"] == [order.ChargeId]
    for order_id in charges:
        assert order_id in orders and orders[order_id].order.Status == OrderStatus.PAID, order_id
    assert get_pending_actions("~") == []
