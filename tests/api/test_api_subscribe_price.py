"""``POST /api/v1/subscriptions``: a customer subscribed to a price (Stripe's ``items:
[{price, quantity}]`` with one item, or ``price`` and ``quantity``), its first period
charged to the default card; an unknown or archived price or a bad quantity a 400 (404
unknown) naming the field; the object's ``items``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from billing import access
from billing.actions import prices as price_actions
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from tests.api.conftest import ApiClient, error_of
from tests.builders import card, make_customer, receipts_of


@pytest.fixture
def buyer(db, moto_table):
    customer = make_customer("buyer@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    access.create_product("TEAM", "Team workspace", 1000, "USD")
    seat = price_actions.add_price("TEAM", PriceTerms("USD", unit_amount=Decimal(1000)), actor="t",
                                   unit_label="seat", min_quantity=1, max_quantity=50)
    yearly = price_actions.add_price("TEAM", PriceTerms("USD", unit_amount=Decimal(9000), interval="year"), actor="t")
    metered = price_actions.add_price("TEAM", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                                         tiers=(Tier(None, Decimal("0.2")),)), actor="t",
                                      meter="api_calls")
    return customer, seat, yearly, metered


def test_items_with_one_seat_price_and_its_quantity(write_api: ApiClient, buyer) -> None:
    customer, seat, _yearly, _metered = buyer
    response = write_api.post("/subscriptions", {"customer": customer.account_id,
                                                 "items": [{"price": seat.PriceId, "quantity": 5}]}, key="s-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["amount"], body["quantity"], body["unit_amount"]) == (5000, 5, 1000)
    assert body["items"] == [{"price": seat.PriceId, "quantity": 5}]
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [5000]
    again = write_api.post("/subscriptions", {"customer": customer.account_id,
                                              "items": [{"price": seat.PriceId, "quantity": 5}]}, key="s-1")
    assert again.json() == body and len(access.get_subscriptions_by_account(customer.account_id)) == 1


def test_items_with_a_price_by_volume_tiers_of_seats(write_api: ApiClient, buyer) -> None:
    """Stripe's licensed tiered price at a quantity: the tiers' amount, no price a seat;
    the seats API then changes it by the difference of the two whole prices."""
    customer, *_ = buyer
    volume = price_actions.add_price("TEAM", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                                        tiers=(Tier(10, Decimal(1000)), Tier(None, Decimal(800)))),
                                     actor="t", unit_label="seat", min_quantity=1, max_quantity=100)
    response = write_api.post("/subscriptions", {"customer": customer.account_id,
                                                 "items": [{"price": volume.PriceId, "quantity": 12}]}, key="v-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["amount"], body["quantity"], body["unit_amount"]) == (9600, 12, None)
    assert body["items"] == [{"price": volume.PriceId, "quantity": 12}]
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [9600]
    graduated_free = price_actions.add_price("TEAM", PriceTerms("USD", BillingScheme.TIERED,
                                                                tiers_mode=TiersMode.GRADUATED,
                                                                tiers=(Tier(2, Decimal(0)), Tier(None, Decimal(800)))),
                                             actor="t", unit_label="seat")
    free = write_api.post("/subscriptions", {"customer": customer.account_id,
                                             "items": [{"price": graduated_free.PriceId, "quantity": 3}]})
    assert free.status_code == 400 and error_of(free)["param"].endswith("price")


def test_price_alone_a_yearly(write_api: ApiClient, buyer) -> None:
    customer, _seat, yearly, _metered = buyer
    body = write_api.post("/subscriptions", {"customer": customer.account_id, "price": yearly.PriceId}).json()
    assert (body["amount"], body["interval"], body["items"]) == (9000, "year", [{"price": yearly.PriceId,
                                                                                "quantity": 1}])


def test_refusals_name_the_field(write_api: ApiClient, buyer) -> None:
    customer, seat, yearly, metered = buyer
    who = {"customer": customer.account_id}

    def refused(body: dict, status: int = 400) -> dict:
        response = write_api.post("/subscriptions", {**who, **body})
        assert response.status_code == status, response.content
        return error_of(response)

    # a metered price alone subscribes to its usage (tests/api/test_api_usage_alone.py), never with seats
    assert refused({"items": [{"price": metered.PriceId, "quantity": 2}]})["param"] == "items[0].quantity"
    assert refused({"price": seat.PriceId, "quantity": 51})["param"] == "quantity"
    assert refused({"items": [{"price": seat.PriceId, "quantity": 51}]})["param"] == "items[0].quantity"
    assert refused({"price": yearly.PriceId, "quantity": 2})["param"] == "quantity"
    assert refused({"price": "price_TEAM_0123456789abcdef"}, 404)["param"] == "price"
    assert refused({"items": [{"price": seat.PriceId}], "price": seat.PriceId})["param"] == "items"
    assert refused({})["param"] == "price"
    assert refused({"items": []})["type"] == "invalid_request_error"
    price_actions.archive_price(yearly, actor="t")
    error = refused({"price": yearly.PriceId})
    assert error["param"] == "price" and "archived" in error["message"]
    assert access.get_subscriptions_by_account(customer.account_id) == []


def test_items_with_a_fixed_and_a_metered_price(write_api: ApiClient, buyer) -> None:
    customer, seat, _yearly, metered = buyer
    response = write_api.post("/subscriptions", {"customer": customer.account_id, "items": [
        {"price": seat.PriceId, "quantity": 2}, {"price": metered.PriceId}]})
    assert response.status_code == 201, response.content
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.MeteredPriceId == metered.PriceId and int(sub.Quantity) == 2
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [2000]  # the first payment bills no usage


def test_metered_items_refused_clearly(write_api: ApiClient, buyer) -> None:
    customer, seat, _yearly, metered = buyer
    other = price_actions.add_price("TEAM", PriceTerms("EUR", unit_amount=Decimal("0.5")), actor="t",
                                    meter="api_calls")

    def refused(items: list) -> dict:
        response = write_api.post("/subscriptions", {"customer": customer.account_id, "items": items})
        assert response.status_code == 400, response.content
        return error_of(response)

    error = refused([{"price": seat.PriceId}, {"price": other.PriceId}])
    assert error["param"] == "items[1].price" and "one currency" in error["message"]
    error = refused([{"price": seat.PriceId}] * 7)
    assert error["type"] == "invalid_request_error"  # seven items: a fixed price and five metered at most
    # two prices of one meter would bill each of its events twice
    error = refused([{"price": metered.PriceId}, {"price": other.PriceId}])
    assert error["param"] == "items[1].price" and "meter api_calls" in error["message"]
    error = refused([{"price": seat.PriceId}, {"price": metered.PriceId}, {"price": metered.PriceId}])
    assert error["param"] == "items[2].price" and "billed twice" in error["message"]
    assert refused([{"price": seat.PriceId}, {"price": metered.PriceId, "quantity": 3}])["param"] == \
        "items[1].quantity"
    assert access.get_subscriptions_by_account(customer.account_id) == []


def test_a_metered_price_of_another_interval_is_refused_before_charging(write_api: ApiClient, buyer) -> None:
    # Its tiers count a month's usage: billed with a yearly payment they would count a year's
    # (tests/billing/test_metered_cadence.py).
    customer, _seat, yearly, metered = buyer
    response = write_api.post("/subscriptions", {"customer": customer.account_id, "items": [
        {"price": yearly.PriceId}, {"price": metered.PriceId}]})
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["param"] == "items[1].price" and "interval" in error["message"]
    assert access.get_subscriptions_by_account(customer.account_id) == []
