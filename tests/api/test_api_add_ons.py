"""The API's add-ons (billing/api/add_ons.py): added and removed from the next payment, the
subscription's ``items`` and ``amount`` answering it, the upcoming payment a line an item
as the charge then takes it, refusals as 409s, a repeated Idempotency-Key answered once,
and the requests one call makes (counted)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.actions import subscriptions as subscribing
from billing.models import AuditAction
from billing.operations import payments
from tests.api.conftest import ApiClient, error_of
from tests.builders import card, fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

MADE, MID, NEXT = date(2027, 3, 10), datetime(2027, 3, 25, 12, tzinfo=UTC), date(2027, 4, 10)


def _plan():
    access.create_product("MAG", "Magazine", 999, "USD")
    access.create_product("STORAGE", "Extra storage", 300, "USD", add_on=True)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        started = subscribing.subscribe(
            access.create_account("api-addons@example.com"), sku="MAG", product_name="Magazine", payment_day=10,
            amount=999, currency="USD", card=card(), today=MADE, actor="customer")
    return started.sub


def test_an_add_on_through_the_api(write_api: ApiClient, read_api: ApiClient) -> None:
    sub = _plan()
    with time_machine.travel(MID, tick=False):
        added = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_default_STORAGE"},
                               key="add-1")
        assert added.status_code == 200, added.content
        body = added.json()
        assert body["amount"] == 1299
        assert body["items"] == [
            {"price": "price_default_MAG", "quantity": 1},
            {"price": "price_default_STORAGE", "quantity": 1, "add_on": True, "amount": 300,
             "starts_on": "2027-04-10"}]
        # the same key again: the first answer, nothing added twice
        again = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_default_STORAGE"},
                               key="add-1")
        assert again.json() == body
        assert [e.Action for e in access.get_events_by_account(sub.account_id)].count(AuditAction.ADD_ON_ADDED) == 1
        # another key: the add-on is there already
        twice = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_default_STORAGE"})
        assert twice.status_code == 409
        assert error_of(twice) == {"type": "invalid_state", "message": "The subscription has that add-on already.",
                                   "param": None}
    with time_machine.travel(datetime(2027, 4, 10, 8, tzinfo=UTC), tick=False):
        upcoming = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert upcoming["amount_due"] == 1299
    assert [(line["description"].split(",")[0], line["price"], line["quantity"], line["amount"] + line["tax"])
            for line in upcoming["lines"]] == [("Magazine", None, 1, 999),
                                                ("Extra storage", "price_default_STORAGE", 1, 300)]
    with time_machine.travel(datetime(2027, 4, 10, 12, tzinfo=UTC), tick=False):
        assert payments.take_payment(fresh(sub), run_date=NEXT).amount == 1299
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Net), int(line.Tax)) for line in receipt.TaxLines] == [
        (line["description"].split(",")[0], line["amount"], line["tax"]) for line in upcoming["lines"]]

    with time_machine.travel(datetime(2027, 4, 20, 12, tzinfo=UTC), tick=False):
        removed = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons/price_default_STORAGE/remove")
    assert removed.status_code == 200, removed.content
    assert removed.json()["amount"] == 999
    assert removed.json()["items"][1] == {"price": "price_default_STORAGE", "quantity": 1, "add_on": True,
                                          "amount": 300, "starts_on": "2027-04-10", "ends_on": "2027-05-09"}


def test_refusals_and_bad_bodies(write_api: ApiClient) -> None:
    sub = _plan()
    access.create_product("EURO", "Euro thing", 300, "EUR", add_on=True)
    with time_machine.travel(MID, tick=False):
        other = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_default_EURO"})
        assert other.status_code == 409
        assert error_of(other)["message"] == "That add-on is priced in another currency than the subscription."
        unknown = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_nope"})
        assert (unknown.status_code, error_of(unknown)["message"]) == (409, "That add-on is not offered.")
        extra = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons", {"price": "price_default_STORAGE", "n": 2})
        assert extra.status_code == 400
        missing = write_api.post(f"/subscriptions/{sub.sub_id}/add_ons/price_default_STORAGE/remove")
        assert (missing.status_code, error_of(missing)["message"]) == (409, "The subscription has no such add-on.")
        nobody = write_api.post("/subscriptions/nosuchsub/add_ons", {"price": "price_default_STORAGE"})
        assert nobody.status_code == 404
    assert int(fresh(sub).PaymentAmount) == 999


def test_an_add_on_costs_a_fixed_number_of_requests(write_api: ApiClient, ddb_requests) -> None:
    """Adding reads the key, the subscription, the price (a default price: its product),
    its product and the seller's tax profile, and writes one transaction; beside them the
    idempotency key's claim and answer, and the e-mail's next payment (one Query)."""
    sub = _plan()
    with time_machine.travel(MID, tick=False):
        ddb_requests.reset()
        assert write_api.post(f"/subscriptions/{sub.sub_id}/add_ons",
                              {"price": "price_default_STORAGE"}).status_code == 200
    assert ddb_requests.by_name() == {"GetItem": 5, "UpdateItem": 2, "Query": 1, "TransactWriteItems": 1}


def test_subscribing_with_add_ons(write_api: ApiClient) -> None:
    """Stripe's several fixed items at subscribing: the first the plan, the others its
    add-ons, billed with it from the first charge, on a line each of its invoice."""
    customer = make_customer("api-addons-new@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    access.create_product("MAG", "Magazine", 999, "USD")
    for sku, name, amount in (("STORAGE", "Extra storage", 300), ("SUPPORT", "Priority support", 1500)):
        access.create_product(sku, name, amount, "USD", add_on=True)
    items = [{"price": "price_default_MAG"}, {"price": "price_default_STORAGE"}, {"price": "price_default_SUPPORT"}]
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        made = write_api.post("/subscriptions", {"customer": customer.account_id, "items": items}, key="new-1")
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["amount"] == 999 + 300 + 1500
    assert body["items"][1:] == [
        {"price": "price_default_STORAGE", "quantity": 1, "add_on": True, "amount": 300, "starts_on": "2027-03-10"},
        {"price": "price_default_SUPPORT", "quantity": 1, "add_on": True, "amount": 1500, "starts_on": "2027-03-10"}]
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    [receipt] = receipts_of(sub)
    assert int(receipt.ProcessedAmount) == 2799
    assert [(line.Description, int(line.Gross)) for line in receipt.TaxLines] == [
        ("Magazine", 999), ("Extra storage", 300), ("Priority support", 1500)]

    access.create_product("EURO", "Euro thing", 300, "EUR", add_on=True)
    refusals = [
        ([{"price": "price_default_MAG"}, {"price": "price_default_EURO"}], "items[1].price",
         "That add-on is priced in another currency than the subscription."),
        ([{"price": "price_default_MAG"}, {"price": "price_default_STORAGE", "quantity": 2}], "items[1].quantity",
         "An add-on is for one: its item's quantity is 1."),
        ([{"price": "price_default_MAG"}, {"price": "price_default_STORAGE"}, {"price": "price_default_STORAGE"}],
         "items[2].price", "The subscription has that add-on already."),
        ([{"price": "price_default_MAG"}, {"price": "price_default_MAG"}], "items[1].price",
         "That is a price of your plan's own product: switch to it instead."),
        ([{"price": "price_default_MAG"}, {"price": "price_nope"}], "items[1].price", "No such price: price_nope."),
        ([{"price": "price_default_STORAGE"}, {"price": "price_default_MAG"}], "items[1].price",
         "That product is not sold as an add-on."),
    ]
    for bad, param, message in refusals:
        refused = write_api.post("/subscriptions", {"customer": customer.account_id, "items": bad})
        assert refused.status_code in (400, 404), refused.content
        assert (error_of(refused)["param"], error_of(refused)["message"]) == (param, message)
    assert len(access.get_subscriptions_by_account(customer.account_id)) == 1  # nothing more made


def test_a_product_sold_as_an_add_on_through_the_api(write_api: ApiClient) -> None:
    made = write_api.post("/products", {"sku": "ARCHIVE", "name": "The archive", "amount": 250, "currency": "usd",
                                        "add_on": True})
    assert made.status_code == 201 and made.json()["add_on"] is True
    plain = write_api.post("/products", {"sku": "PLAIN", "name": "Sold alone", "amount": 200, "currency": "usd"})
    assert plain.json()["add_on"] is False

