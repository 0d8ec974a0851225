"""Staff stock changes: never below what is reserved for orders; clear errors."""

from __future__ import annotations

import pytest

from shop import access
from shop.checkout import checkout
from shop.errors import InvalidInput
from tests.shop.helpers import build_shop, request, stock


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    return shop_table


def test_adjusting_stock_keeps_what_orders_reserved(shop) -> None:
    checkout(request(("book", 3)))  # all of near's books reserved
    assert stock("book")["near"] == (3, 3, 0)
    with pytest.raises(InvalidInput):
        access.adjust_stock("book", "near", -1)  # would sell reserved units
    access.adjust_stock("book", "near", 5)  # goods received
    access.adjust_stock("book", "near", -2)  # written off
    assert stock("book")["near"] == (6, 3, 3)


@pytest.mark.parametrize("call", [
    lambda: access.put_stock("book", "near", 1),  # already stocked there
    lambda: access.put_stock("book", "nowhere#", 1),
    lambda: access.put_stock("book", "far", -1),
    lambda: access.adjust_stock("book", "nosuch", 1),  # not stocked there
    lambda: access.adjust_stock("book", "near", 0),
    lambda: access.adjust_stock("x" * 65, "near", 1),
])
def test_bad_stock_changes_are_clear_errors(shop, call) -> None:
    with pytest.raises(InvalidInput) as error:
        call()
    assert str(error.value)
    assert stock("book") == {"near": (3, 0, 3), "far": (4, 0, 4)}
