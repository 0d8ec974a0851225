"""A model-based test: random checkouts (paying with card, gift card and code, some cards
declined), shipments, cancellations and refunds; after every step stock and money add up."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3

from django.conf import settings as django_settings
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from shop import access
from shop.checkout import checkout
from shop.errors import ShopError
from shop.fulfilment import cancel_order, create_shipments, mark_shipped, refund_order
from shop.models import Address, OrderStatus, ShipmentStatus
from tests.shop.helpers import DECLINED_CARD, GOOD_CARD, HOME, card, request

_runs = itertools.count()
OPEN = (OrderStatus.PAID, OrderStatus.PARTIALLY_SHIPPED, OrderStatus.SHIPPED)


def gateway_rows(sql: str, *args) -> list[tuple]:
    with sqlite3.connect(django_settings.PAYMENT_GATEWAY_LEDGER) as db:
        return db.execute(sql, args).fetchall()


class ShopMachine(RuleBasedStateMachine):
    """Each run has its own customer, product, warehouses, gift card and code (fresh ids),
    so runs share the table without seeing each other."""

    @initialize(near=st.integers(0, 6), far=st.integers(0, 6), balance=st.integers(1, 30000))
    def open_shop(self, near: int, far: int, balance: int) -> None:
        n = next(_runs)
        self.customer, self.product = f"sm{n}", f"smp{n}"
        self.warehouses = {f"smn{n}": near, f"smf{n}": far}
        self.gift, self.code = f"SM-GIFT-{n:06d}", f"SMCODE{n}"
        self.balance0, self.orders, self.shipments = balance, [], []
        access.create_product(self.product, "Thing", 2500, "SEK", "things")
        for (wid, qty), zip_code in zip(self.warehouses.items(), ("41111", "90111"), strict=True):
            access.create_warehouse(wid, wid, Address(Country="Sweden", City="X", Street="Y", ZipCode=zip_code))
            access.put_stock(self.product, wid, qty)
        access.issue_gift_card(self.gift, balance, "SEK")
        access.create_discount_code(self.code, percent_off=20, max_uses=2)

    @rule(quantity=st.integers(1, 5), gift=st.booleans(), code=st.booleans(), declined=st.booleans())
    def buy(self, quantity: int, gift: bool, code: bool, declined: bool) -> None:
        req = request((self.product, quantity), customer_id=self.customer, address=HOME,
                      gift_card_code=self.gift if gift else None, discount_code=self.code if code else None,
                      card=card(DECLINED_CARD if declined else GOOD_CARD))
        try:
            order = checkout(req)
        except ShopError:
            return
        self.orders.append(order.order_id)

    @precondition(lambda self: self.orders)
    @rule(data=st.data())
    def ship(self, data) -> None:
        order_id = data.draw(st.sampled_from(self.orders))
        with contextlib.suppress(ShopError):
            self.shipments += [s.shipment_id for s in create_shipments(order_id)]

    @precondition(lambda self: self.shipments)
    @rule(data=st.data())
    def send(self, data) -> None:
        with contextlib.suppress(ShopError):
            mark_shipped(data.draw(st.sampled_from(self.shipments)), "PostNord", "PN1")

    @precondition(lambda self: self.orders)
    @rule(data=st.data(), refund=st.booleans())
    def close(self, data, refund: bool) -> None:
        with contextlib.suppress(ShopError):
            (refund_order if refund else cancel_order)(data.draw(st.sampled_from(self.orders)))

    @invariant()
    def stock_and_money_add_up(self) -> None:
        if not hasattr(self, "product"):
            return
        orders = [access.get_order_details_by_order_id(o, consistent=True)
                  for o in {o.order_id for o in access.get_orders_by_customer_id(self.customer, limit=500)}]
        reserved: dict[str, int] = {}
        shipped: dict[str, int] = {}
        for d in orders:
            o = d.order
            assert o.Subtotal - o.Discount == o.Total == o.GiftCardAmount + o.CardAmount
            sent = {s.shipment_id for s in d.shipments if s.Status == ShipmentStatus.SHIPPED}
            out = {}
            for item in d.shipment_items:
                if item.ShipmentId in sent:
                    out[item.WarehouseId] = out.get(item.WarehouseId, 0) + item.Quantity
            for item in d.items:
                for pick in item.Picks:
                    gone = out.get(pick.WarehouseId, 0)
                    if o.Status in OPEN:
                        reserved[pick.WarehouseId] = reserved.get(pick.WarehouseId, 0) + pick.Quantity - gone
                        shipped[pick.WarehouseId] = shipped.get(pick.WarehouseId, 0) + gone
            charges = gateway_rows("SELECT charge_id, amount FROM charges WHERE idempotency_key = ? "
                                   "AND status = 'succeeded'", f"{o.order_id}:card")
            refunded = gateway_rows("SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge_id IN "
                                    "(SELECT charge_id FROM charges WHERE idempotency_key = ?) "
                                    "AND status = 'succeeded'", f"{o.order_id}:card")[0][0]
            if o.Status in OPEN:
                assert [c[1] for c in charges] == ([o.CardAmount] if o.CardAmount else []) and refunded == 0
            elif o.Status in (OrderStatus.CANCELLED, OrderStatus.REFUNDED):
                assert refunded == sum(c[1] for c in charges) == o.CardAmount
            else:
                assert o.Status == OrderStatus.DECLINED and charges == []
        for s in access.get_product_inventory_by_product_id(self.product):
            assert s.Available == s.OnHand - s.Reserved and min(s.Available, s.OnHand, s.Reserved) >= 0
            assert s.Reserved == reserved.get(s.warehouse_id, 0)
            # shipped units left; returned ones (refunded orders) came back
            assert s.OnHand == self.warehouses[s.warehouse_id] - shipped.get(s.warehouse_id, 0)
        spent = sum(d.order.GiftCardAmount for d in orders if d.order.Status in OPEN)
        assert access.get_gift_card(self.gift).Balance == self.balance0 - spent >= 0
        # the ledger adds up to the balance, and nets to zero for every closed order
        ledger = access.get_gift_card_with_ledger(self.gift, limit=1000)
        assert sum(e.Amount for e in ledger.entries) == ledger.card.Balance
        for d in orders:
            net = sum(e.Amount for e in ledger.entries if e.OrderId == d.order.order_id)
            assert net == (-d.order.GiftCardAmount if d.order.Status in OPEN else 0)
        uses = sum(1 for d in orders if d.order.Status in OPEN and d.order.DiscountCode)
        assert access.get_discount_code(self.code).Uses == uses <= 2


def test_stock_and_money_always_add_up(shop_table) -> None:
    examples = 12 if shop_table == "moto" else 6
    run_state_machine_as_test(ShopMachine, settings=settings(
        max_examples=examples, stateful_step_count=12, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]))


