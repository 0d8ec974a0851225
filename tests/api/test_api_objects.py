"""The objects as the API and the events show them (billing/rules/api_objects.py)."""

from __future__ import annotations

import json
from datetime import date

from billing import access
from billing.rules import api_objects
from billing.rules.projection import coming_charges
from tests.builders import make_account, make_customer_with_history, make_subscription


def test_a_subscription_shows_the_pages_state_and_the_runs_next_charge(moto_table) -> None:
    sub = make_subscription(make_account(), payment_day=15, amount=999, today=date(2027, 1, 10))
    shown = api_objects.subscription_object(sub, today=date(2027, 1, 10))
    assert shown["object"] == "subscription" and shown["id"] == sub.sub_id
    assert shown["status"] == "active" and shown["status_label"] == "Active"
    charge = coming_charges(sub, 1)[0]
    assert shown["next_payment"]["amount"] == charge.amount
    assert shown["next_payment"]["date"] == charge.date.isoformat()
    assert shown["currency"] == "USD"
    json.dumps(shown)


def test_a_cancelled_subscription_is_named_as_the_pages_name_it(moto_table) -> None:
    sub = make_subscription(make_account(), payment_day=15, amount=999, today=date(2027, 1, 10))
    shown = api_objects.subscription_object(access.cancel_subscription(sub), today=date(2027, 1, 10))
    assert shown["status"] == "ended" and shown["status_label"] == "Ended"
    assert shown["next_payment"] is None


def test_every_object_is_json_with_a_type_and_an_id(db, moto_table) -> None:
    history = make_customer_with_history()
    product = access.create_product("TEA", "Tea", 1500, "JPY")
    shown = [
        api_objects.customer_object(history.account),
        api_objects.receipt_object(history.receipt),
        api_objects.product_object(product),
    ]
    for obj in shown:
        assert obj["object"] and obj["id"]
        json.dumps(obj)
    assert shown[1]["id"] == history.receipt.url_id
    assert shown[1]["amount"] == 999 and shown[1]["currency"] == "USD"
