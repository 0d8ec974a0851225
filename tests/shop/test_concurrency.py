"""Checkouts at once, on real threads against DynamoDB Local (moto's transactions are
not atomic between threads): never oversold, never overspent, one order per token."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import access
from shop.checkout import checkout, new_checkout_token
from shop.errors import DiscountCodeUsedUp, GiftCardBalanceTooLow, InvalidInput, OutOfStock, ShopError
from tests.shop.helpers import CUSTOMER, assert_books_balance, build_shop, card, request, shop_charges, stock

pytestmark = pytest.mark.local_engine


@pytest.fixture
def shop(real_shop_table: str) -> str:
    build_shop()
    return real_shop_table


def at_once(n: int, make_request) -> list[object]:
    """Run n checkouts on n threads released together; each result or the error raised."""
    requests = [make_request(i) for i in range(n)]  # cards tokenized before the start
    barrier = threading.Barrier(n)

    def one(req):
        barrier.wait()
        try:
            return checkout(req)
        except ShopError as error:
            return error

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, requests))


class StockWatcher:
    """Reads the stock over and over while the checkouts run: it must never be negative."""

    def __init__(self, product_id: str) -> None:
        self.product_id, self.lowest, self._stop = product_id, None, threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not self._stop.is_set():
            for s in access.get_product_inventory_by_product_id(self.product_id):
                low = min(s.Available, s.OnHand, s.Reserved)
                self.lowest = low if self.lowest is None else min(self.lowest, low)

    def __enter__(self) -> StockWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def test_twenty_checkouts_for_the_last_five_units(shop) -> None:
    # The book's last five units: 3 near and 2 far (read the near stock down to 3 first).
    access.adjust_stock("book", "far", -2)
    assert sum(a for _, _, a in stock("book").values()) == 5
    with StockWatcher("book") as watcher:
        results = at_once(20, lambda i: request(("book", 1)))
    orders = [r for r in results if not isinstance(r, Exception)]
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(orders) == 5, Counter(type(r).__name__ for r in results)
    assert all(isinstance(e, OutOfStock) and e.product_id == "book" for e in errors), errors
    assert watcher.lowest is not None and watcher.lowest >= 0
    assert stock("book") == {"near": (3, 3, 0), "far": (2, 2, 0)}
    assert len(shop_charges()) == 5
    assert_books_balance()


def test_two_checkouts_spending_one_gift_card(shop) -> None:
    access.issue_gift_card("SHARED-GIFT-01", 5000, "SEK")
    results = at_once(6, lambda i: request(("book", 1), gift_card_code="SHARED-GIFT-01", card=card()))
    orders = [r for r in results if not isinstance(r, Exception)]
    errors = [r for r in results if isinstance(r, Exception)]
    assert all(isinstance(e, GiftCardBalanceTooLow | InvalidInput) for e in errors), errors
    balance = access.get_gift_card("SHARED-GIFT-01").Balance
    assert balance >= 0
    assert sum(o.GiftCardAmount for o in orders) == 5000 - balance
    assert all(o.GiftCardAmount + o.CardAmount == 4000 for o in orders)
    assert_books_balance()


def test_a_code_limited_to_three_uses(shop) -> None:
    access.create_discount_code("THREE", percent_off=10, max_uses=3)
    results = at_once(10, lambda i: request(("album", 1), discount_code="THREE"))
    with_code = [r for r in results if not isinstance(r, Exception)]
    assert len(with_code) == 3, results
    assert all(isinstance(r, DiscountCodeUsedUp) for r in results if isinstance(r, Exception))
    assert access.get_discount_code("THREE").Uses == 3
    assert all(o.Discount == 1000 for o in with_code)


def test_a_double_submit_at_once_is_one_order_and_one_charge(shop) -> None:
    token = new_checkout_token()
    token_card = card()
    results = at_once(4, lambda i: request(("album", 1), token=token, card=token_card))
    assert [r.order_id for r in results] == [token] * 4, results
    assert [o.order_id for o in access.get_orders_by_customer_id(CUSTOMER)] == [token]
    assert len(shop_charges()) == 1
    assert stock("album") == {"near": (10, 1, 9)}
    assert_books_balance()
