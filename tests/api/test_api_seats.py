"""``POST /api/v1/subscriptions/{id}/quantity``: seats changed through the portal's action
(billing/actions/seats.py), charged once however the request is repeated, its bad input
a 400 naming ``quantity``, an unknown subscription a 404."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail

from billing import access
from core.pages import today
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.builders import card, fresh, make_customer_with_history, receipts_of


@pytest.fixture
def scheduled(db, moto_table):
    """An active subscription paid through the day before its next payment (a week on)."""
    history = make_customer_with_history()
    day = today()
    sub = access.set_schedule(history.sub, next_payment=day + timedelta(days=7), last_payment=day - timedelta(days=20),
                              next_reminder=day + timedelta(days=1), last_reminder=day - timedelta(days=20))
    access.replace_card(fresh(sub), card(), actor="test")  # a card the simulated gateway takes
    mail.outbox.clear()
    return history, fresh(sub)


def seat_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "seats"]


def test_more_seats_are_charged_once_however_the_request_is_repeated(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    unit = int(sub.PaymentAmount)
    path = f"/subscriptions/{sub.sub_id}/quantity"
    first = write_api.post(path, {"quantity": 3}, key="seats-1")
    assert first.status_code == 200, first.content
    body = first.json()
    assert (body["quantity"], body["unit_amount"], body["amount"]) == (3, unit, 3 * unit)
    [charge] = seat_charges(sub)
    assert charge["status"] == "succeeded" and charge["amount"] > 0
    # the same key and body: the first answer, nothing charged again
    again = write_api.post(path, {"quantity": 3}, key="seats-1")
    assert (again.status_code, again.json()) == (200, body) and again["Idempotent-Replayed"] == "true"
    # the same key with another body: refused
    assert error_of(write_api.post(path, {"quantity": 4}, key="seats-1"))["type"] == "idempotency_error"
    # a retry without the key: the quantity is 3 already, nothing charged
    retried = write_api.post(path, {"quantity": 3})
    assert retried.status_code == 409 and error_of(retried)["type"] == "invalid_state"
    assert len(seat_charges(sub)) == 1 and fresh(sub).Quantity == 3
    assert [e.Action for e in access.get_events_by_account(history.account_id)
            if e.Actor == "api:warehouse"] == ["subscription.quantity_changed"]
    # and the subscription's object says so on a read
    assert write_api.get(f"/subscriptions/{sub.sub_id}").json()["quantity"] == 3


def test_fewer_seats_are_credited(write_api: ApiClient, scheduled) -> None:
    _, sub = scheduled
    path = f"/subscriptions/{sub.sub_id}/quantity"
    assert write_api.post(path, {"quantity": 4}).status_code == 200
    charged = seat_charges(sub)[0]["amount"]
    fewer = write_api.post(path, {"quantity": 1})
    assert fewer.status_code == 200 and fewer.json()["amount"] == int(sub.PaymentAmount)
    assert sum(int(r.RefundedAmount or 0) for r in receipts_of(sub)) == charged  # the same days, the same seats


# (the hostile-input checks of billing/api/writes.py's routes, for this module's route: numbers
# DynamoDB cannot store, and wrong types)
@pytest.mark.parametrize("quantity", [0, -1, 10_001, "3", 2.5, 3.0, True, False, None, [2], {"n": 2}, 10**400,
                                      -(10**39), 10**37])
def test_a_quantity_that_is_not_one_is_a_400(write_api: ApiClient, scheduled, quantity) -> None:
    _, sub = scheduled
    answer = write_api.post(f"/subscriptions/{sub.sub_id}/quantity", {"quantity": quantity})
    assert answer.status_code == 400, answer.content
    assert error_of(answer)["param"] == "quantity"
    assert not seat_charges(sub) and fresh(sub).Quantity is None


def test_an_unknown_subscription_is_a_404(write_api: ApiClient, scheduled) -> None:
    answer = write_api.post("/subscriptions/nosuchsub/quantity", {"quantity": 2})
    assert answer.status_code == 404


def test_a_read_key_cannot_change_seats(read_api: ApiClient, scheduled) -> None:
    _, sub = scheduled
    assert read_api.post(f"/subscriptions/{sub.sub_id}/quantity", {"quantity": 2}).status_code == 403


def test_above_the_prices_maximum_is_a_400(write_api: ApiClient, scheduled) -> None:
    from decimal import Decimal

    from billing.actions import prices as price_actions
    from billing.models import Subscription
    from billing.rules.pricing import PriceTerms

    _, sub = scheduled
    if access.get_product(sub.SKU) is None:
        access.create_product(sub.SKU, "News", int(sub.PaymentAmount), sub.Currency)
    price = price_actions.add_price(sub.SKU, PriceTerms(sub.Currency, unit_amount=Decimal(int(sub.PaymentAmount))),
                                    actor="t", nickname="Per seat", min_quantity=1, max_quantity=4)
    fresh(sub).update(actions=[Subscription.PriceId.set(price.PriceId)])  # as subscribing to the price leaves it
    answer = write_api.post(f"/subscriptions/{sub.sub_id}/quantity", {"quantity": 5})
    assert answer.status_code == 400 and error_of(answer)["param"] == "quantity"
    assert "from 1 to 4" in error_of(answer)["message"] and not seat_charges(sub)
    assert write_api.post(f"/subscriptions/{sub.sub_id}/quantity", {"quantity": 4}).status_code == 200
