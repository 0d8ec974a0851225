"""The API under a careless or hostile client: whatever arrives (a body over the size
limit, an id no key can hold, a number DynamoDB cannot store, a wrong JSON type, odd
unicode), the answer is the API's JSON error, never a 500. The routes are taken from the
ninja router itself, so a route added later is covered without being listed here."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.core import mail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ninja.operation import Operation
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from billing import access
from billing.api import api
from billing.api.schemas import MAX_WHOLE
from core.pages import today
from tests.api.conftest import ApiClient, error_of
from tests.builders import fresh, make_customer_with_history

# Every route of every router the API mounts (reads and writes, prices, meters, metrics,
# seats, upcoming): (path, method, operation), from the routers' own lists.
OPERATIONS = [(path, method, op) for _, router in api._routers for path, view in router.path_operations.items()
              for op in view.operations for method in op.methods]

# Ids no key can hold: past DynamoDB's limits once encoded, past ours, or holding what the
# key format reserves ('#' separates a key's parts) or a control character.
BAD_IDS = ["x" * 2100, "é" * 1100, "x" * 101, "a#b", "#", "ACC#CATALOG", "SUB#x#SKU#y", "abc\x01def", "\x7f",
           "REC#2026-11-15#SKU#NEWS#SUB#" + "9" * 1100]
# Numbers DynamoDB cannot store (over 38 significant digits, or past its range), and one
# it can but no amount or count ever is.
HUGE_NUMBERS = [10**400, 2**200 + 1, 10**38 + 1, 123456789012345678901234567890123456789, -(10**39), 10**37]
WRONG_TYPES: list[Any] = [True, False, 1.5, "ten", [1], {"n": 1}]


def fields_of(op: Operation, source: str) -> dict[str, FieldInfo]:
    """The fields a route takes from ``source`` (path, query, body), flattened as sent."""
    fields: dict[str, FieldInfo] = {}
    for model in op.models:
        if model.__ninja_param_source__ != source:
            continue
        for name, field in model.model_fields.items():
            inner = field.annotation
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                fields.update(inner.model_fields)  # a Query[Paging] or the body's schema
            else:
                fields[name] = field
    return fields


def body_model(op: Operation) -> type[BaseModel] | None:
    for model in op.models:
        if model.__ninja_param_source__ == "body":
            return model.model_fields["body"].annotation
    return None


def takes_int(model: type[BaseModel], name: str) -> bool:
    return '"integer"' in json.dumps(model.model_json_schema()["properties"][name])


def url(path: str, ids: dict[str, str]) -> str:
    for name, value in ids.items():
        path = path.replace("{" + name + "}", quote(value, safe=""))
    return path


@pytest.fixture
def world(db, moto_table, settings):
    """A customer with subscriptions and a receipt, the next payment a week on (no payment
    is being taken today), and calls never rate-limited."""
    settings.API_RATE_LIMIT = 10**6
    history = make_customer_with_history()
    day = today()
    access.set_schedule(history.sub, next_payment=day + timedelta(days=7), last_payment=day - timedelta(days=20),
                        next_reminder=day + timedelta(days=1), last_reminder=day - timedelta(days=20))
    mail.outbox.clear()
    history.sub = fresh(history.sub)
    return history


def real_ids(history) -> dict[str, str]:
    return {"customer_id": history.account_id, "subscription_id": history.sub.sub_id,
            "receipt_id": history.receipt.url_id, "product_id": "NEWS-DAILY", "code": "NOPE",
            "price_id": "price_default_NEWS-DAILY", "event_name": "api_calls"}


def call(api_client: ApiClient, method: str, path: str, *, query: dict | None = None, raw: str | bytes | None = None,
         headers: dict[str, str] | None = None):
    full = "/api/v1" + path
    sent = {**api_client.headers(), **(headers or {})}
    if method == "GET":
        return api_client.client.get(full, query or {}, headers=sent)
    return api_client.client.generic(method, full + (f"?{_query_string(query)}" if query else ""),
                                     raw if raw is not None else "{}", content_type="application/json", headers=sent)


def _query_string(query: dict) -> str:
    return "&".join(f"{quote(str(k), safe='')}={quote(str(v), safe='')}" for k, v in query.items())


# --- 413: a body over DATA_UPLOAD_MAX_MEMORY_SIZE -------------------------------------------


@pytest.mark.parametrize(("path", "reads_body"), sorted({(p, body_model(op) is not None) for p, m, op in OPERATIONS
                                                          if m == "POST"}))
def test_a_body_over_the_size_limit_is_a_413_json_error(write_api: ApiClient, world, settings, path,
                                                        reads_body) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"description": "x" * 2000})
    # A write reads its body to validate it, and any write with an Idempotency-Key to
    # fingerprint the request; a write that takes no body and has no key never reads it.
    for headers in ({}, {"Idempotency-Key": "big-1"}) if reads_body else ({"Idempotency-Key": "big-1"},):
        response = call(write_api, "POST", url(path, real_ids(world)), raw=body, headers=headers)
        assert response.status_code == 413, (path, response.content)
        error = error_of(response)
        assert error["type"] == "invalid_request_error" and "1000" in error["message"]


# --- 14: an id no key can hold ---------------------------------------------------------------


ID_ROUTES = [(path, method, name) for path, method, op in OPERATIONS for name in fields_of(op, "path")]


def test_every_id_taking_route_is_listed() -> None:
    # The parametrization below is not empty by mistake: each kind of id is there.
    assert {name for _, _, name in ID_ROUTES} == {"customer_id", "subscription_id", "receipt_id", "product_id", "code",
                                                  "price_id", "event_name"}
    assert len({(p, m) for p, m, _ in ID_ROUTES}) == 28  # with the add-ons' two


@pytest.mark.parametrize(("path", "method", "name"), ID_ROUTES)
def test_an_id_no_key_can_hold_is_a_404_on_every_route(write_api: ApiClient, world, path, method, name) -> None:
    for bad in BAD_IDS:
        response = call(write_api, method, url(path, {**real_ids(world), name: bad}))
        assert response.status_code in (400, 404), (path, name, bad[:30], response.content)
        error = error_of(response)
        # A 404 from the routes names what was not found; a 400 names the parameter.
        assert response.status_code == 404 or error["param"] == name, (path, name, error)
        if response.status_code == 404 and error["param"] is not None:
            assert error["param"] in real_ids(world), error


# --- 15: numbers DynamoDB cannot store -------------------------------------------------------

# A valid body of each write whose schema takes a number: the number tried replaces one
# field, so the only fault is that number.
VALID_BODIES: dict[str, dict[str, Any]] = {
    "ProductIn": {"sku": "HUGE-1", "name": "Huge", "amount": 100, "currency": "USD"},
    "CouponIn": {"code": "HUGE-1", "percent_off": 10},
    "PauseIn": {"payments": 1},
    "PaymentDayIn": {"payment_day": 5},
    "RefundIn": {"amount": 1},
    "PriceIn": {"product": "NEWS-DAILY", "currency": "USD", "recurring": {"interval": "month"}, "unit_amount": 100},
    "SubscribeIn": {"customer": "acc-hostile-1", "price": "price_default_NEWS-DAILY", "quantity": 1},
    "QuantityIn": {"quantity": 2},
    "SwitchIn": {"product": "NEWS-DAILY"},
}
NUMERIC_FIELDS = [(path, body_model(op).__name__, name)
                  for path, method, op in OPERATIONS if body_model(op) is not None
                  for name in body_model(op).model_fields if takes_int(body_model(op), name)]


def test_every_write_with_a_number_has_a_valid_body_here() -> None:
    assert {model for _, model, _ in NUMERIC_FIELDS} == set(VALID_BODIES)
    assert len(NUMERIC_FIELDS) >= 9  # amount, amount_off, percent_off, max_uses, days...


@pytest.mark.parametrize(("path", "model", "name"), NUMERIC_FIELDS)
def test_a_number_dynamodb_cannot_store_is_a_400_naming_its_field(write_api: ApiClient, world, path, model,
                                                                  name) -> None:
    for number in [*HUGE_NUMBERS, *WRONG_TYPES]:
        body = json.dumps({**VALID_BODIES[model], name: number})
        response = call(write_api, "POST", url(path, real_ids(world)), raw=body)
        assert response.status_code == 400, (path, name, str(number)[:20], response.content[:300])
        assert error_of(response)["param"] == name


def test_every_number_the_api_takes_is_bounded_in_its_document() -> None:
    """The root: one bounded whole-number type for every integer a call takes (bodies and
    query), so its document shows the bound and no field is left out."""
    document = api.get_openapi_schema()
    schemas = document["components"]["schemas"]
    seen: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                walk(schemas[node["$ref"].rsplit("/", 1)[1]], where)
                return
            if node.get("type") == "integer":
                seen.append(where)
                assert node.get("maximum", MAX_WHOLE + 1) <= MAX_WHOLE, (where, node)
                assert node.get("minimum", node.get("exclusiveMinimum", -1)) >= 0, (where, node)
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            walk(operation.get("parameters", []), f"{method} {path} parameters")
            walk(operation.get("requestBody", {}), f"{method} {path} body")
    assert len(seen) >= 15, seen


def test_an_email_with_a_nul_is_a_400_not_a_database_error(read_api: ApiClient, world) -> None:
    # PostgreSQL refuses a NUL in a query outright (SQLite only finds nothing).
    response = read_api.get("/customers", email="ann\x00@example.com")
    assert response.status_code == 400 and error_of(response)["param"] == "email"


# --- every route, generated bad input: never a 500, always JSON ------------------------------

printable_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
odd_text = st.sampled_from(["", " ", "x" * 3000, "\x00", "é" * 300, "😀" * 50, "a#b", "..", "%", "null", "NaN",
                            "2026-02-30", "9999-12-31", "0001-01-01", "-1", "1e400", "9" * 5000,
                            "evt_20260101T000000000000Z_0123abcd", "evt_99999999T999999999999Z_0123abcd"])
any_text = printable_text | odd_text
numbers = (st.integers() | st.sampled_from(HUGE_NUMBERS) | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([0, -1, 1, 31, 32, 100, 101, 365, 366, MAX_WHOLE, MAX_WHOLE + 1]))
json_scalars = st.none() | st.booleans() | numbers | any_text | st.sampled_from(
    ["now", "period_end", "repeating", "forever", "USD", "usd", "EUR", "XAU", "https://example.com/hook",
     "http://127.0.0.1/x", "subscription.created"])
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(printable_text, inner, max_size=3), max_leaves=8)


@st.composite
def bad_request(draw, history) -> tuple[str, str, dict, str | bytes | None, dict]:
    """One route, its ids (real, odd or impossible), its query and body fields with odd
    values of any JSON type (or a body that is not JSON at all), and maybe an odd
    Idempotency-Key."""
    path, method, op = draw(st.sampled_from(OPERATIONS))
    ids = {name: draw(st.sampled_from([real_ids(history)[name], *BAD_IDS]) | any_text)
           for name in fields_of(op, "path")}
    query = {name: draw(any_text | numbers.map(str)) for name in fields_of(op, "query")
             if draw(st.booleans())}
    raw: str | bytes | None = None
    model = body_model(op)
    if model is not None:
        fields = {name: draw(json_values) for name in model.model_fields if draw(st.booleans())}
        raw = draw(st.sampled_from(["fields", "any", "bytes"]))
        if raw == "fields":
            raw = json.dumps({**fields, **draw(st.dictionaries(printable_text, json_values, max_size=2))})
        elif raw == "any":
            raw = json.dumps(draw(json_values))
        else:
            raw = draw(st.binary(max_size=200))
    headers = {"Idempotency-Key": draw(printable_text)} if draw(st.booleans()) else {}
    return method, url(path, ids), query, raw, headers


def test_bad_input_on_every_route_never_gets_a_500(write_api: ApiClient, world) -> None:
    @settings(max_examples=250, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(bad_request(world))
    def never_a_500(request: tuple) -> None:
        method, path, query, raw, headers = request
        response = call(write_api, method, path, query=query, raw=raw, headers=headers)
        assert response.status_code < 500, (method, path, query, raw, response.content[:300])
        if response["Content-Type"] == "application/pdf":
            assert response.status_code == 200 and path.endswith("/pdf")
        else:
            assert response["Content-Type"].startswith("application/json"), (method, path, response.content[:200])
            json.loads(response.content)

    never_a_500()
