"""The API's prices (billing/api/prices.py, docs/API.md "Prices"): listed with a product's
derived default price, read by id, added and archived by a write key with an
Idempotency-Key; bad input a 400 naming its field, never a 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access
from billing.api import api
from tests.api.conftest import ApiClient, error_of

API_CALLS = {"product": "API", "currency": "usd", "recurring": {"interval": "month", "meter": "api_calls"},
             "billing_scheme": "tiered", "tiers_mode": "graduated", "unit_label": "call",
             "tiers": [{"up_to": 1000, "unit_amount": 0}, {"up_to": "inf", "unit_amount_decimal": "0.2"}]}


@pytest.fixture
def catalog(db, moto_table, settings):
    settings.API_RATE_LIMIT = 10**6
    access.create_product("API", "API access", 2000, "USD")
    access.create_product("TEAM", "Team plan", 1000, "USD")


def test_a_product_lists_its_default_price(read_api: ApiClient, catalog) -> None:
    listed = read_api.get("/products/TEAM/prices")
    assert listed.status_code == 200, listed.content
    [price] = listed.json()["data"]
    assert price == {**price, "id": "price_default_TEAM", "object": "price", "product": "TEAM", "currency": "USD",
                     "unit_amount": 1000, "unit_amount_decimal": "1000", "billing_scheme": "per_unit",
                     "tiers_mode": None, "tiers": None, "transform_quantity": None, "active": True, "meter": None}
    assert price["recurring"]["interval"] == "month" and price["recurring"]["interval_count"] == 1
    assert read_api.get("/prices/price_default_TEAM").json() == price
    missing = read_api.get("/products/NOPE/prices")
    assert missing.status_code == 404 and error_of(missing)["param"] == "product_id"


def test_add_a_metered_graduated_price_then_archive_it(write_api: ApiClient, read_api: ApiClient, catalog) -> None:
    made = write_api.post("/prices", API_CALLS, key="p-1")
    assert made.status_code == 201, made.content
    price = made.json()
    assert price["id"].startswith("price_API_") and price["product"] == "API" and price["currency"] == "USD"
    assert price["tiers"] == [
        {"up_to": 1000, "unit_amount": 0, "unit_amount_decimal": "0", "flat_amount": 0},
        {"up_to": None, "unit_amount": None, "unit_amount_decimal": "0.2", "flat_amount": 0}]
    assert price["meter"] == "api_calls" and price["recurring"]["usage_type"] == "metered"
    # The same Idempotency-Key replays; another body with it is refused.
    again = write_api.post("/prices", API_CALLS, key="p-1")
    assert again.json() == price and again["Idempotent-Replayed"] == "true"
    assert write_api.post("/prices", {**API_CALLS, "nickname": "x"}, key="p-1").status_code == 409
    ids = [p["id"] for p in read_api.get("/products/API/prices").json()["data"]]
    assert ids == ["price_default_API", price["id"]]

    archived = write_api.post(f"/prices/{price['id']}/archive", key="a-1")
    assert archived.status_code == 200 and archived.json()["active"] is False
    assert archived.json()["tiers"] == price["tiers"]  # the amounts stay
    assert [p["id"] for p in read_api.get("/products/API/prices").json()["data"]] == ["price_default_API"]
    both = read_api.get("/products/API/prices", include_archived="true").json()["data"]
    assert [p["active"] for p in both] == [True, False]
    twice = write_api.post(f"/prices/{price['id']}/archive")
    assert twice.status_code == 409 and error_of(twice)["type"] == "invalid_state"
    default = write_api.post("/prices/price_default_API/archive")
    assert default.status_code == 409 and "retire the product" in error_of(default)["message"]
    events = [e for e in access.get_events_by_account("CATALOG") if e.Action.startswith("price.")]
    assert sorted((e.Action, e.Actor) for e in events) == [("price.archived", "api:warehouse"),
                                                           ("price.created", "api:warehouse")]


def test_per_seat_yearly_and_package_prices(write_api: ApiClient, catalog) -> None:
    seat = write_api.post("/prices", {"product": "TEAM", "currency": "USD", "unit_amount": 1000, "unit_label": "seat",
                                      "recurring": {"interval": "month"}, "quantity": {"minimum": 1, "maximum": 50}})
    assert seat.status_code == 201 and seat.json()["quantity"] == {"minimum": 1, "maximum": 50}
    yearly = write_api.post("/prices", {"product": "TEAM", "currency": "JPY", "unit_amount": 120000,
                                        "recurring": {"interval": "year"}})
    assert yearly.json()["recurring"]["interval"] == "year" and yearly.json()["currency"] == "JPY"
    package = write_api.post("/prices", {"product": "TEAM", "currency": "USD", "unit_amount": 500,
                                         "recurring": {"interval": "month"},
                                         "transform_quantity": {"divide_by": 5, "round": "up"}})
    assert package.json()["transform_quantity"] == {"divide_by": 5, "round": "up"}


def test_a_read_key_cannot_add_a_price(read_api: ApiClient, catalog) -> None:
    assert read_api.post("/prices", API_CALLS).status_code == 403


BAD = [
    ({"currency": "XXX"}, "currency"),
    ({"product": "NOPE"}, "product"),
    ({"product": "lower"}, "product"),
    ({"billing_scheme": "per_unit", "unit_amount": 5}, "tiers"),
    ({"tiers_mode": None}, "tiers_mode"),
    ({"tiers": []}, "tiers"),
    ({"tiers": [{"up_to": 10, "unit_amount": 1}]}, "tiers"),
    ({"tiers": [{"up_to": 10, "unit_amount": 1}, {"up_to": 5, "unit_amount": 1}, {"up_to": "inf", "unit_amount": 1}]},
     "tiers"),
    ({"tiers": [{"up_to": "inf", "unit_amount": 1, "unit_amount_decimal": "1"}]}, "tiers.0.unit_amount_decimal"),
    ({"tiers": [{"up_to": "inf", "unit_amount": -1}]}, "tiers.0.unit_amount"),
    ({"tiers": [{"up_to": "inf", "unit_amount_decimal": "0.0000000000001"}]}, "tiers.0.unit_amount_decimal"),
    ({"tiers": [{"up_to": 0, "unit_amount": 1}, {"up_to": "inf", "unit_amount": 1}]}, "tiers.0.up_to"),
    ({"unit_amount": 5}, "unit_amount"),
    ({"transform_quantity": {"divide_by": 5}}, "transform_quantity"),
    ({"recurring": {"interval": "fortnight"}}, "recurring.interval"),
    ({"recurring": {"interval": "month", "interval_count": 37}}, "recurring.interval_count"),
    ({"recurring": {"interval": "month", "meter": "bad name"}}, "recurring.meter"),
    ({"quantity": {"minimum": 5, "maximum": 2}}, "quantity.maximum"),
    ({"surprise": 1}, "surprise"),
]


@pytest.mark.parametrize(("change", "param"), BAD)
def test_bad_input_is_a_400_naming_its_field(write_api: ApiClient, catalog, change, param) -> None:
    refused = write_api.post("/prices", {**API_CALLS, **change})
    assert refused.status_code == 400, refused.content
    assert error_of(refused)["param"] == param


def test_a_per_unit_price_needs_one_unit_amount(write_api: ApiClient, catalog) -> None:
    body = {"product": "TEAM", "currency": "USD", "recurring": {"interval": "month"}}
    assert error_of(write_api.post("/prices", body))["param"] == "unit_amount"
    both = write_api.post("/prices", {**body, "unit_amount": 1, "unit_amount_decimal": "1.5"})
    assert error_of(both)["param"] == "unit_amount_decimal"
    assert write_api.post("/prices", {**body, "unit_amount_decimal": "0.25"}).json()["unit_amount_decimal"] == "0.25"


@pytest.mark.parametrize("path", ["/prices/nope", "/prices/price_NOPE_abc", "/prices/a%23b", "/prices/" + "x" * 300,
                                  "/prices/price_default_NOPE"])
def test_a_price_that_is_not_there_is_a_404(read_api: ApiClient, catalog, path) -> None:
    missing = read_api.get(path)
    assert missing.status_code == 404 and error_of(missing)["type"] == "not_found"


def test_the_prices_are_in_the_openapi_document() -> None:
    paths = api.get_openapi_schema()["paths"]
    assert {"/api/v1/products/{product_id}/prices", "/api/v1/prices", "/api/v1/prices/{price_id}",
            "/api/v1/prices/{price_id}/archive"} <= set(paths)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
                           | st.sampled_from(["inf", "tiered", "per_unit", "graduated", "volume", "month", "0.2"]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=3), max_leaves=8)


def test_any_body_is_answered_without_a_500(write_api: ApiClient, catalog) -> None:
    fields = list(API_CALLS) + ["unit_amount", "unit_amount_decimal", "transform_quantity", "quantity", "nickname"]

    @settings(max_examples=120, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.dictionaries(st.sampled_from(fields), json_values, max_size=6), st.booleans())
    def never_a_500(change: dict, from_valid: bool) -> None:
        body = {**API_CALLS, **change} if from_valid else change
        response = write_api.post("/prices", raw=json.dumps(body))
        assert response.status_code in (201, 400, 409), (body, response.content[:300])
        json.loads(response.content)

    never_a_500()


def test_reading_prices_costs_a_fixed_number_of_requests(read_api: ApiClient, write_api: ApiClient, catalog,
                                                         ddb_requests) -> None:
    made = write_api.post("/prices", API_CALLS).json()
    read_api.get("/products")  # the key's first use is written once
    auth = {"GetItem": 1, "UpdateItem": 1}  # the key, the rate counter
    calls = {
        "/products/API/prices": {"GetItem": 1, "Query": 1},  # the product, its prices
        f"/prices/{made['id']}": {"GetItem": 1},  # the id holds the SKU
        "/prices/price_default_API": {"GetItem": 1},  # the product
    }
    for path, expected in calls.items():
        ddb_requests.reset()
        assert read_api.get(path).status_code == 200, path
        want = {name: auth.get(name, 0) + expected.get(name, 0) for name in {*auth, *expected}}
        assert dict(ddb_requests.by_name()) == want, path
