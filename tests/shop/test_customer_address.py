"""The shipping address kept on the customer item: written in the order's own
transaction (no extra request), creating the item for an account that never bought."""

from __future__ import annotations

import pytest

from shop import access
from shop.checkout import checkout
from shop.models import Customer
from tests.shop.helpers import HOME, build_shop, request
from tests.shop.test_index_keys import stored


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    return shop_table


def test_a_first_checkout_creates_the_customer_with_the_address(shop, ddb_requests) -> None:
    assert access.get_customer_by_customer_id("newbie") is None
    ddb_requests.reset()
    order = checkout(request(("album", 1), customer_id="newbie", email="new@example.com"))
    assert ddb_requests.by_name()["TransactWriteItems"] == 2  # no write of its own
    [customer] = stored([Customer(**Customer.keys(customer_id="newbie"))])
    assert isinstance(customer, Customer) and customer.customer_id == "newbie"
    assert customer.ShippingAddress.as_dict() == HOME
    assert customer.Email == "new@example.com" and customer.AddressSavedAt == order.PlacedAt
    assert customer.CreatedAt == order.PlacedAt


def test_a_later_checkout_replaces_the_address_but_keeps_the_rest(shop) -> None:
    before = access.get_customer_by_customer_id("cust1")
    elsewhere = {**HOME, "Street": "Kungsgatan", "Number": "1"}
    checkout(request(("album", 1), address=elsewhere, email="changed@example.com"))
    after = access.get_customer_by_customer_id("cust1")
    assert after.ShippingAddress.Street == "Kungsgatan"
    assert (after.Email, after.Name, after.CreatedAt) == (before.Email, before.Name, before.CreatedAt)


def test_not_keeping_the_address_leaves_the_customer_alone(shop) -> None:
    checkout(request(("album", 1), customer_id="private", save_address=False))
    assert access.get_customer_by_customer_id("private") is None
