"""``GET /api/v1/subscriptions/{id}/upcoming``: what the next payment will charge, from the
function the payment run charges by; read before the payment day, then the payment is
taken on it and charges exactly the amount shown."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.access.coupons import coupon_attributes
from billing.operations import payments
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.builders import card, fresh, make_account, make_subscription, receipts_of

D = date(2027, 3, 15)
BEFORE = datetime(2027, 3, 10, 12, tzinfo=UTC)


def _due(coupon: bool = False):
    """A monthly subscription (with its id's look-up item) paid through 14 March, due on the 15th."""
    sub = make_subscription(make_account(), payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15), next_reminder=date(2027, 3, 8),
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    if coupon:
        made = access.create_coupon("HALF", actor="staff", percent_off=50, duration="forever")
        sub = fresh(sub)
        for name, value in coupon_attributes(made).items():
            setattr(sub, name, value)
        sub.save()
    return fresh(sub)


@pytest.mark.parametrize("coupon", [False, True])
def test_the_upcoming_amount_is_what_the_payment_day_charges(read_api: ApiClient, coupon: bool) -> None:
    sub = _due(coupon)
    with time_machine.travel(BEFORE, tick=False):
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming")
    assert shown.status_code == 200, shown.content
    body = shown.json()
    assert (body["date"], body["currency"], body["period_start"]) == ("2027-03-15", sub.Currency, "2027-03-15")
    assert body["amount_due"] == sum(line["amount"] + line["tax"] for line in body["lines"])
    [line] = body["lines"]
    assert line["meter"] is None and line["quantity"] == 1
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=D)
    assert outcome.status == "paid"
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    assert charge["amount"] == receipt.ProcessedAmount == body["amount_due"]
    assert body["amount_due"] == (499 if coupon else 999)  # half of 9.99 off, rounded half up: 5.00


def test_the_upcoming_payment_costs_a_fixed_number_of_requests(read_api: ApiClient, ddb_requests) -> None:
    sub = _due()
    read_api.get("/products")  # the key's first use is written once
    ddb_requests.reset()
    assert read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").status_code == 200
    # the key and its rate counter (GetItem, UpdateItem) as every call; then the id's
    # look-up item, the seller's tax profile (GetItems) and the subscription's Query
    assert ddb_requests.by_name() == Counter({"GetItem": 3, "UpdateItem": 1, "Query": 1})


def test_an_unknown_subscription_is_a_json_404(read_api: ApiClient) -> None:
    answer = read_api.get("/subscriptions/nosuch/upcoming")
    assert answer.status_code == 404
    assert error_of(answer)["param"] == "subscription_id"


def test_a_cancelled_subscription_has_nothing_upcoming(read_api: ApiClient) -> None:
    sub = _due()
    access.cancel_subscription(sub, reason="test", actor="test", check_version=False)
    answer = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming")
    assert answer.status_code == 404 and "no payment to come" in error_of(answer)["message"]


def test_a_key_is_needed(client) -> None:
    assert client.get("/api/v1/subscriptions/x/upcoming").status_code == 401
