"""The seed's sixteen access patterns (and the shop's extras) against the seed's sample:
one test per pattern, each asserting what the sample says and that it costs one request."""

from __future__ import annotations

from datetime import date

import pytest

from shop import access

pytestmark = pytest.mark.usefixtures("seeded")


def one_request(ddb_requests, op: str) -> None:
    assert ddb_requests.by_name() == {op: 1}, ddb_requests.ops


def test_01_get_customer_by_customer_id(ddb_requests) -> None:
    customer = access.get_customer_by_customer_id("12345")
    one_request(ddb_requests, "GetItem")
    assert (customer.Name, customer.Email, customer.customer_id) == ("Samaneh", "samaneh@example.com", "12345")
    assert access.get_customer_by_customer_id("99999") is None


def test_02_get_product_by_product_id(ddb_requests) -> None:
    product = access.get_product_by_product_id("99887")
    one_request(ddb_requests, "GetItem")
    assert (product.Name, product.Price, product.Currency) == ("The Book", 4000, "SEK")


def test_03_get_warehouse_by_warehouse_id(ddb_requests) -> None:
    warehouse = access.get_warehouse_by_warehouse_id("12376")
    one_request(ddb_requests, "GetItem")
    assert warehouse.Address.City == "Boras"


def test_04_get_product_inventory_by_product_id(ddb_requests) -> None:
    stock = access.get_product_inventory_by_product_id("99887")
    one_request(ddb_requests, "Query")
    assert {(s.warehouse_id, s.OnHand, s.Available) for s in stock} == {("12345", 4, 4), ("12376", 4, 4)}


def test_05_get_order_details_by_order_id(ddb_requests) -> None:
    details = access.get_order_details_by_order_id("12345")
    one_request(ddb_requests, "Query")
    assert details.order.customer_id == "12345" and details.order.PlacedAt == "2020-06-21T19:10:00Z"
    assert {i.product_id for i in details.items} == {"12345", "99887"}
    assert details.invoice.invoice_id == "55443"
    assert len(details.payments) == 2 and len(details.shipments) == 2 and len(details.shipment_items) == 3


def test_06_get_product_by_order_id(ddb_requests) -> None:
    lines = access.get_product_by_order_id("12345")
    one_request(ddb_requests, "Query")
    assert {(line.product_id, line.Quantity, line.Price) for line in lines} == {("12345", 2, 10000),
                                                                                 ("99887", 5, 4000)}


def test_07_get_invoice_by_order_id(ddb_requests) -> None:
    invoice = access.get_invoice_by_order_id("12345")
    one_request(ddb_requests, "Query")
    assert (invoice.invoice_id, invoice.Amount, invoice.Currency) == ("55443", 40000, "SEK")


def test_08_get_shipment_by_order_id(ddb_requests) -> None:
    shipments = access.get_shipment_by_order_id("12345")
    one_request(ddb_requests, "Query")
    assert {s.shipment_id for s in shipments} == {"98765", "88899"}  # no shipment items (shp#)


def test_09_get_order_by_product_id_for_date_range(ddb_requests) -> None:
    lines = access.get_order_by_product_id_for_date_range("99887", date(2020, 6, 1), date(2020, 6, 21))
    one_request(ddb_requests, "Query")
    assert [(line.OrderId, line.Quantity) for line in lines] == [("12345", 5)]  # the whole last day counts
    assert access.get_order_by_product_id_for_date_range("99887", date(2020, 6, 22), date(2020, 7, 1)) == []


def test_10_get_invoice_by_invoice_id(ddb_requests) -> None:
    invoice = access.get_invoice_by_invoice_id("55443")
    one_request(ddb_requests, "Query")
    assert invoice.OrderId == "12345" and invoice.Amount == 40000


def test_11_get_payment_by_invoice_id(ddb_requests) -> None:
    payments = access.get_payment_by_invoice_id("55443")
    one_request(ddb_requests, "Query")
    assert sorted((p.Type, p.Amount) for p in payments) == [("Card", 30000), ("GiftCard", 10000)]
    assert sum(p.Amount for p in payments) == access.get_invoice_by_invoice_id("55443").Amount


def test_12_get_shipment_details_by_shipment_id(ddb_requests) -> None:
    details = access.get_shipment_details_by_shipment_id("98765")
    one_request(ddb_requests, "Query")
    assert details.shipment.WarehouseId == "12345"
    assert {(i.ProductId, i.Quantity) for i in details.items} == {("12345", 2), ("99887", 3)}


def test_13_get_shipment_by_warehouse_id(ddb_requests) -> None:
    shipments = access.get_shipment_by_warehouse_id("12376")
    one_request(ddb_requests, "Query")
    assert [s.shipment_id for s in shipments] == ["88899"]
    assert access.get_shipment_by_warehouse_id("12376", since="2020-06-23") == []


def test_14_get_product_inventory_by_warehouse_id(ddb_requests) -> None:
    stock = access.get_product_inventory_by_warehouse_id("12376")
    one_request(ddb_requests, "Query")
    # The seed left this warehouseItem out of GSI2: here it is found.
    assert [(s.product_id, s.Available) for s in stock] == [("99887", 4)]
    assert len(access.get_product_inventory_by_warehouse_id("12345")) == 2


def test_15_get_invoice_by_customer_id_for_date_range(ddb_requests) -> None:
    invoices = access.get_invoice_by_customer_id_for_date_range("12345", date(2020, 6, 21), date(2020, 6, 21))
    one_request(ddb_requests, "Query")
    assert [i.invoice_id for i in invoices] == ["55443"]  # no order lines: the i# prefix, no filter
    assert access.get_invoice_by_customer_id_for_date_range("12345", date(2020, 6, 22), date(2020, 6, 30)) == []


def test_16_get_products_by_customer_id_for_date_range(ddb_requests) -> None:
    lines = access.get_products_by_customer_id_for_date_range("12345", date(2020, 6, 1), date(2020, 6, 30))
    one_request(ddb_requests, "Query")
    assert sorted((line.Name, line.Quantity) for line in lines) == [("Options Open", 2), ("The Book", 5)]
    assert access.get_products_by_customer_id_for_date_range("23456", date(2020, 6, 1), date(2020, 6, 30)) == []


def test_products_by_category(ddb_requests) -> None:
    products = access.get_products_by_category("books")
    one_request(ddb_requests, "Query")
    assert [p.Name for p in products] == ["The Book"]


def test_orders_by_customer_id(ddb_requests) -> None:
    orders = access.get_orders_by_customer_id("12345")
    one_request(ddb_requests, "Query")
    assert [o.order_id for o in orders] == ["12345"]
    assert access.get_orders_by_customer_id("54321") == []


def test_discount_code_and_gift_card_look_ups(ddb_requests) -> None:
    access.create_discount_code("spring10", percent_off=10, max_uses=3)
    access.issue_gift_card("GIFT-AAAA-BBBB-1234", 5000, "SEK")
    ddb_requests.reset()
    assert access.get_discount_code("SPRING10").PercentOff == 10
    assert access.get_gift_card("gift-aaaa-bbbb-1234").Balance == 5000  # codes are case-insensitive
    assert ddb_requests.by_name() == {"GetItem": 2}
    assert access.get_discount_code("NOPE") is None and access.get_gift_card("NOPE") is None


def test_names_behind_ids_are_one_batch_get(ddb_requests) -> None:
    names = access.get_products_by_ids(["12345", "99887", "bad#id"])
    one_request(ddb_requests, "BatchGetItem")
    assert {pid: p.Name for pid, p in names.items()} == {"12345": "Options Open", "99887": "The Book"}


@pytest.mark.parametrize("bad", ["", "x" * 65, "12#34", "a b", "../etc", "p#12345"])
def test_bad_ids_find_nothing_and_send_nothing(bad: str, ddb_requests) -> None:
    assert access.get_customer_by_customer_id(bad) is None
    assert access.get_product_by_product_id(bad) is None
    assert access.get_order_details_by_order_id(bad) is None
    assert access.get_shipment_details_by_shipment_id(bad) is None
    assert access.get_product_inventory_by_warehouse_id(bad) == []
    assert access.get_invoice_by_customer_id_for_date_range(bad, date(2020, 1, 1), date(2020, 12, 31)) == []
    assert ddb_requests.total == 0
