"""A gift card's ledger: every movement (issued, paid an order, put back on a decline,
a cancellation or a refund) is an entry written with the balance change, so the entries
always add up to the balance; the card and its ledger are one Query."""

from __future__ import annotations

import pytest

from shop import access
from shop.checkout import checkout
from shop.errors import CardDeclined
from shop.fulfilment import cancel_order, create_shipments, mark_shipped, refund_order
from tests.shop.helpers import DECLINED_CARD, build_shop, card, request

CODE = "LEDGER-CARD-0001"


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    access.issue_gift_card(CODE, 30000, "SEK", actor="sam@example.com")
    return shop_table


def ledger() -> list[tuple[str, int, str | None, str]]:
    found = access.get_gift_card_with_ledger(CODE)
    assert sum(e.Amount for e in found.entries) == found.card.Balance  # the ledger adds up
    return [(e.Kind, e.Amount, e.OrderId, e.Actor) for e in reversed(found.entries)]


def test_every_movement_has_an_entry(shop, ddb_requests) -> None:
    ddb_requests.reset()
    assert ledger() == [("issued", 30000, None, "sam@example.com")]
    assert ddb_requests.by_name() == {"Query": 1}
    paid = checkout(request(("album", 1), gift_card_code=CODE, email="c1@example.com"))
    with pytest.raises(CardDeclined):
        checkout(request(("album", 3), gift_card_code=CODE, card=card(DECLINED_CARD), token="declined1"))
    shipped = checkout(request(("book", 2), gift_card_code=CODE))
    create_shipments(shipped.order_id)
    for shipment in access.get_order_details_by_order_id(shipped.order_id, consistent=True).shipments:
        mark_shipped(shipment.shipment_id, "DHL", "D1")
    cancel_order(paid.order_id, actor="fin@example.com")
    refund_order(shipped.order_id, actor="fin@example.com")
    assert ledger() == [
        ("issued", 30000, None, "sam@example.com"),
        ("debit", -10000, paid.order_id, "c1@example.com"),
        ("debit", -20000, "declined1", "customer cust1"),
        ("reversal", 20000, "declined1", "system"),
        ("debit", -8000, shipped.order_id, "customer cust1"),
        ("cancel", 10000, paid.order_id, "fin@example.com"),
        ("refund", 8000, shipped.order_id, "fin@example.com"),
    ]
    assert access.get_gift_card(CODE).Balance == 30000


def test_balance_after_each_movement_and_paging(shop) -> None:
    for _ in range(3):
        checkout(request(("album", 1), gift_card_code=CODE))
    found = access.get_gift_card_with_ledger(CODE, limit=2)
    assert found.more and [balance for _, balance in found.rows()] == [0, 10000]
    assert access.get_gift_card_with_ledger("NO-SUCH-CARD") is None
