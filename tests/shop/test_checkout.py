"""Checkout: one transaction, the card after it, a decline rolled back, errors that name
what failed, and bad input that writes nothing."""

from __future__ import annotations

import pytest

from shop import access
from shop.checkout import checkout, new_checkout_token, settle
from shop.errors import (
    CardDeclined,
    DiscountCodeUsedUp,
    GiftCardBalanceTooLow,
    InvalidInput,
    NotFound,
    OutOfStock,
)
from shop.models import OrderStatus, PaymentStatus
from tests.shop.helpers import CUSTOMER, DECLINED_CARD, build_shop, card, request, shop_charges, stock
from tests.shop.test_index_keys import assert_all_index_keys, stored


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    return shop_table


def test_a_paid_order_reserves_stock_and_charges_the_card(shop, ddb_requests) -> None:
    order = checkout(request(("album", 2), ("book", 1)))
    ops = ddb_requests.by_name()
    # reads: each product with its stock (a Query per product), warehouses (1 BatchGetItem),
    # the invoice's seller and buyer (the business profile and the account: 2 GetItem);
    # writes: the order transaction, then the one that marks it paid.
    assert ops == {"BatchGetItem": 1, "Query": 2, "GetItem": 2, "TransactWriteItems": 2}, ddb_requests.ops
    assert order.Status == OrderStatus.PAID and order.Total == 24000 and order.CardAmount == 24000
    assert stock("album") == {"near": (10, 2, 8)}
    assert stock("book")["near"] == (3, 1, 2)  # the nearest warehouse
    [charge] = shop_charges()
    assert charge["idempotency_key"] == f"{order.order_id}:card" and charge["amount"] == 24000
    details = access.get_order_details_by_order_id(order.order_id)
    assert details.invoice.Amount == 24000 and [p.ChargeId for p in details.payments] == [charge["charge_id"]]
    assert [o.order_id for o in access.get_orders_by_customer_id(CUSTOMER)] == [order.order_id]
    assert_all_index_keys(stored([details.order, *details.items, details.invoice, *details.payments]))
    # the next checkout within the minute reads no warehouse again (their addresses kept);
    # its invoice's seller and buyer, as they are now (2 GetItem)
    ddb_requests.reset()
    checkout(request(("album", 1)))
    assert ddb_requests.by_name() == {"Query": 1, "GetItem": 2, "TransactWriteItems": 2}


def test_a_line_is_split_across_warehouses_nearest_first(shop) -> None:
    order = checkout(request(("book", 5)))
    [line] = access.get_product_by_order_id(order.order_id)
    assert [(p.WarehouseId, p.Quantity) for p in line.Picks] == [("near", 3), ("far", 2)]
    assert stock("book") == {"near": (3, 3, 0), "far": (4, 2, 2)}


def test_discount_code_and_gift_card_pay_before_the_card(shop) -> None:
    access.create_discount_code("TEN", percent_off=10, max_uses=5)
    access.issue_gift_card("GIFT-0000-0001", 3000, "SEK")
    order = checkout(request(("album", 1), discount_code="ten", gift_card_code="gift-0000-0001"))
    assert (order.Subtotal, order.Discount, order.GiftCardAmount, order.CardAmount) == (10000, 1000, 3000, 6000)
    assert access.get_gift_card("GIFT-0000-0001").Balance == 0
    assert access.get_discount_code("TEN").Uses == 1
    payments = access.get_payment_by_invoice_id(order.InvoiceId)
    assert sorted((p.Type, p.Amount) for p in payments) == [("Card", 6000), ("GiftCard", 3000)]
    assert access.get_invoice_by_order_id(order.order_id).Amount == 9000


def test_a_gift_card_that_covers_everything_needs_no_card(shop) -> None:
    access.issue_gift_card("BIG-CARD-0002", 100000, "SEK")
    order = checkout(request(("book", 1), gift_card_code="BIG-CARD-0002", card=None))
    assert order.Status == OrderStatus.PAID and order.CardAmount == 0
    assert shop_charges() == [] and access.get_gift_card("BIG-CARD-0002").Balance == 96000


def test_a_declined_card_rolls_everything_back(shop) -> None:
    access.create_discount_code("ONCE", amount_off=500, currency="SEK", max_uses=1)
    access.issue_gift_card("GIFT-0000-0003", 1000, "SEK")
    req = request(("book", 4), discount_code="ONCE", gift_card_code="GIFT-0000-0003", card=card(DECLINED_CARD))
    with pytest.raises(CardDeclined) as declined:
        checkout(req)
    assert declined.value.decline_code == "card_declined"
    assert stock("book") == {"near": (3, 0, 3), "far": (4, 0, 4)}
    assert access.get_gift_card("GIFT-0000-0003").Balance == 1000
    assert access.get_discount_code("ONCE").Uses == 0
    details = access.get_order_details_by_order_id(req.token)
    assert details.order.Status == OrderStatus.DECLINED
    assert [p.Status for p in details.payments] == [PaymentStatus.REVERSED]
    with pytest.raises(CardDeclined):  # submitting it again says the same, charges nothing
        checkout(req)
    assert shop_charges() == []


def test_out_of_stock_names_the_product(shop) -> None:
    with pytest.raises(OutOfStock) as error:
        checkout(request(("album", 1), ("book", 8)))
    assert error.value.product_id == "book" and error.value.available == 7
    assert "The Book" in str(error.value)
    assert stock("album") == {"near": (10, 0, 10)} and shop_charges() == []


def test_a_code_used_up_and_a_gift_card_spent_are_named(shop) -> None:
    access.create_discount_code("ONE", percent_off=5, max_uses=1)
    checkout(request(("album", 1), discount_code="ONE"))
    with pytest.raises(DiscountCodeUsedUp):
        checkout(request(("album", 1), discount_code="ONE"))
    access.issue_gift_card("GIFT-0000-0004", 1000, "SEK")
    checkout(request(("album", 1), gift_card_code="GIFT-0000-0004"))
    with pytest.raises(InvalidInput, match="nothing left"):
        checkout(request(("album", 1), gift_card_code="GIFT-0000-0004"))


@pytest.mark.parametrize("lines, error", [
    ((("nosuch", 1),), NotFound),
    ((("album", 0),), InvalidInput),
    ((("album", -2),), InvalidInput),
    ((("album", 10**9),), InvalidInput),
    ((("album", 1.5),), InvalidInput),
    ((("album", "3"),), InvalidInput),
    ((("al#bum", 1),), InvalidInput),
    ((("x" * 200, 1),), InvalidInput),
    ((), InvalidInput),
    ((("album", 1), ("euro", 1)), InvalidInput),  # two currencies
])
def test_bad_carts_write_nothing(shop, ddb_requests, lines, error) -> None:
    with pytest.raises(error) as raised:
        checkout(request(*lines))
    assert str(raised.value)  # a message a page can show
    assert "TransactWriteItems" not in ddb_requests.by_name() and shop_charges() == []


@pytest.mark.parametrize("kwargs, error", [
    ({"discount_code": "NOSUCH"}, NotFound),
    ({"discount_code": "bad#code"}, InvalidInput),
    ({"gift_card_code": "NO-SUCH-CARD"}, NotFound),
    ({"card": None}, InvalidInput),
    ({"address": {"Country": "Sweden"}}, InvalidInput),
    ({"customer_id": "c#1"}, InvalidInput),
    ({"token": "tok#en"}, InvalidInput),
])
def test_bad_checkout_details_write_nothing(shop, ddb_requests, kwargs, error) -> None:
    with pytest.raises(error):
        checkout(request(("album", 1), **kwargs))
    assert "TransactWriteItems" not in ddb_requests.by_name() and shop_charges() == []
    assert stock("album") == {"near": (10, 0, 10)}


def test_a_double_submit_places_one_order_and_charges_once(shop) -> None:
    req = request(("album", 1))
    first = checkout(req)
    second = checkout(req)
    assert first.order_id == second.order_id == req.token
    assert stock("album") == {"near": (10, 1, 9)}
    assert len(shop_charges()) == 1 and len(access.get_orders_by_customer_id(CUSTOMER)) == 1
    assert settle(req.token).Status == OrderStatus.PAID


def test_gift_card_balance_race_is_named(shop, monkeypatch) -> None:
    # Another checkout spends the card between this one's read and its transaction.
    access.issue_gift_card("GIFT-0000-0005", 5000, "SEK")
    import shop.checkout as module

    real = module.get_gift_card

    def stale(code: str):
        found = real(code)
        found.Balance = 5000
        return found

    checkout(request(("book", 1), gift_card_code="GIFT-0000-0005"))
    monkeypatch.setattr(module, "get_gift_card", stale)
    with pytest.raises(GiftCardBalanceTooLow) as error:
        checkout(request(("book", 1), gift_card_code="GIFT-0000-0005"))
    assert error.value.balance == 1000
    assert access.get_gift_card("GIFT-0000-0005").Balance == 1000


def stale_plan(**overrides):
    """A plan made from reads that are no longer true (another checkout came first)."""
    from shop.access.checkout_writes import PlannedLine, PlannedOrder

    values = dict(order_id=new_checkout_token(), invoice_id="inv1", customer_id=CUSTOMER,
                  placed_at="2026-11-23T10:00:00Z", currency="SEK",
                  lines=(PlannedLine("album", "Options Open", 10000, 1, (("near", 1),)),
                         PlannedLine("book", "The Book", 4000, 9, (("near", 4), ("far", 5)))),
                  subtotal=46000, discount=0, gift_card_amount=0, card_amount=46000, card_token="tok")
    values.update(overrides)
    return PlannedOrder(**values)


def test_a_cancelled_transaction_names_the_product_and_what_is_left(shop) -> None:
    from shop.access.checkout_writes import place_order

    plan = stale_plan()
    with pytest.raises(OutOfStock) as error:
        place_order(plan, token=new_checkout_token())
    # the first failing stock item: near has 3 books, not 4 (CancellationReasons + ALL_OLD)
    assert (error.value.product_id, error.value.available) == ("book", 3)
    assert stock("album") == {"near": (10, 0, 10)}  # nothing of it was written
    assert access.get_order_details_by_order_id(plan.order_id) is None


def test_a_cancelled_transaction_names_the_code(shop) -> None:
    from shop.access.checkout_writes import place_order

    access.create_discount_code("LIMIT1", percent_off=10, max_uses=1)
    checkout(request(("album", 1), discount_code="LIMIT1"))
    plan = stale_plan(lines=stale_plan().lines[:1], subtotal=10000, discount=1000, card_amount=9000,
                      discount_code="LIMIT1", discount_max_uses=1)
    with pytest.raises(DiscountCodeUsedUp):
        place_order(plan, token=new_checkout_token())
    assert access.get_discount_code("LIMIT1").Uses == 1


def test_a_checkout_token_longer_than_a_client_request_token_is_refused(shop) -> None:
    with pytest.raises(InvalidInput):
        checkout(request(("album", 1), token="a" * 33))
