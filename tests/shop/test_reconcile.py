"""A crash at each step of a checkout (or a cancellation), then the reconcile command:
no stock leaked, no charge without an order, no paid order without a charge."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from shop import access, faults
from shop.checkout import checkout
from shop.errors import CardDeclined, PaymentPending
from shop.fulfilment import cancel_order
from shop.models import OrderStatus
from tests.shop.helpers import (
    DECLINED_CARD,
    assert_books_balance,
    build_shop,
    card,
    request,
    shop_charges,
    stock,
)


class Crash(BaseException):
    """Stands for the process dying: nothing in the code catches a BaseException."""


@pytest.fixture
def shop(shop_table: str) -> str:
    build_shop()
    access.issue_gift_card("GIFT-9999-0001", 1000, "SEK")
    return shop_table


@pytest.fixture
def crash_at(monkeypatch):
    def arm(step: str) -> None:
        def hook(name: str) -> None:
            if name == step:
                raise Crash(step)
        monkeypatch.setattr(faults, "hook", hook)
    return arm


def reconcile() -> str:
    faults.hook = None
    out = io.StringIO()
    call_command("reconcile_checkouts", "--older-than", "0", stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("step, number, outcome", [
    ("planned", "4242424242424242", None),
    ("placed", "4242424242424242", OrderStatus.PAID),
    ("charged", "4242424242424242", OrderStatus.PAID),
    ("placed", DECLINED_CARD, OrderStatus.DECLINED),
    ("declined", DECLINED_CARD, OrderStatus.DECLINED),
])
def test_a_crash_then_reconcile(shop, crash_at, step, number, outcome) -> None:
    req = request(("album", 2), ("book", 5), gift_card_code="GIFT-9999-0001", card=card(number))
    crash_at(step)
    with pytest.raises(Crash):
        checkout(req)
    out = reconcile()
    order = access.get_order_details_by_order_id(req.token)
    if outcome is None:
        assert order is None and "0 finished" in out
        assert stock("album") == {"near": (10, 0, 10)}
    else:
        assert order.order.Status == outcome
        assert ("finished" if outcome == OrderStatus.PAID else "rolled back") in out
    if outcome != OrderStatus.PAID:
        assert access.get_gift_card("GIFT-9999-0001").Balance == 1000
        assert stock("book") == {"near": (3, 0, 3), "far": (4, 0, 4)}
    assert_books_balance()
    assert "0 finished, 0 rolled back" in reconcile()  # nothing left to do
    # the customer submitting again gets the same outcome, never a second charge
    if outcome == OrderStatus.PAID:
        assert checkout(req).Status == OrderStatus.PAID
    elif outcome == OrderStatus.DECLINED:
        with pytest.raises(CardDeclined):
            checkout(req)
    assert len(shop_charges()) == (1 if outcome == OrderStatus.PAID else 0)


def test_a_gateway_outage_leaves_the_order_pending_until_reconcile(shop, monkeypatch) -> None:
    gateway = get_gateway()

    def down(*args, **kwargs):
        raise GatewayError("timeout")

    monkeypatch.setattr(type(gateway), "charge", down)
    req = request(("album", 1))
    with pytest.raises(PaymentPending):
        checkout(req)
    assert "still pending" in reconcile()
    monkeypatch.undo()
    assert "finished" in reconcile()
    assert access.get_order_details_by_order_id(req.token).order.Status == OrderStatus.PAID
    assert_books_balance()


def test_a_crash_between_cancel_and_card_refund(shop, crash_at) -> None:
    order = checkout(request(("album", 1), gift_card_code="GIFT-9999-0001"))
    crash_at("closed")
    with pytest.raises(Crash):
        cancel_order(order.order_id)
    details = access.get_order_details_by_order_id(order.order_id)
    assert details.order.Status == OrderStatus.CANCELLED
    assert [p.Status for p in details.payments if p.Type == "Card"] == ["succeeded"]  # not refunded yet
    assert "finished cancel" in reconcile()
    details = access.get_order_details_by_order_id(order.order_id)
    assert {p.Type: p.Status for p in details.payments} == {"Card": "refunded", "GiftCard": "refunded"}
    assert stock("album") == {"near": (10, 0, 10)} and access.get_gift_card("GIFT-9999-0001").Balance == 1000
    assert "0 finished" in reconcile()


def test_reconcile_json_for_cron(shop, crash_at) -> None:
    import json

    req = request(("album", 1))
    crash_at("placed")
    with pytest.raises(Crash):
        checkout(req)
    faults.hook = None
    out = io.StringIO()
    call_command("reconcile_checkouts", "--older-than", "3600", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"finished": [], "rolled_back": [], "still_pending": [], "failed": []}
    out = io.StringIO()
    call_command("reconcile_checkouts", "--older-than", "0", "--json", stdout=out)
    assert json.loads(out.getvalue())["finished"] == [f"checkout {req.token}"]
