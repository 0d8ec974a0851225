"""The API's reads: every resource, its 404, cursor paging, and the requests each call makes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import signing

from billing import access
from billing.models import DisputeEntry
from billing.rules.projection import coming_charges
from tests.api.conftest import ApiClient, error_of
from tests.builders import make_customer_with_history, make_subscription


@pytest.fixture
def history(db, moto_table):
    return make_customer_with_history("ann@example.com")


def test_a_customer_by_email_and_by_id(read_api: ApiClient, history) -> None:
    found = read_api.get("/customers", email="ANN@example.com").json()
    assert [c["id"] for c in found["data"]] == [history.account_id]
    assert read_api.get("/customers", email="nobody@example.com").json()["data"] == []
    one = read_api.get(f"/customers/{history.account_id}").json()
    assert one["object"] == "customer" and one["email"] == "ann@example.com"
    missing = read_api.get("/customers/0000000000000000")
    assert missing.status_code == 404 and error_of(missing)["param"] == "customer_id"
    assert read_api.get("/customers/bad#id").status_code == 404


def test_a_customers_subscriptions_and_one_of_them(read_api: ApiClient, history) -> None:
    listed = read_api.get(f"/customers/{history.account_id}/subscriptions").json()
    assert {s["id"] for s in listed["data"]} == {history.sub.sub_id, history.past_due.sub_id, history.cancelled.sub_id}
    by_id = {s["id"]: s for s in listed["data"]}
    assert by_id[history.sub.sub_id]["status"] == "active"
    assert by_id[history.past_due.sub_id]["status"] == "past_due"
    assert by_id[history.past_due.sub_id]["status_label"] == "Past due"
    assert by_id[history.cancelled.sub_id]["status"] == "ended"
    one = read_api.get(f"/subscriptions/{history.sub.sub_id}").json()
    assert one == by_id[history.sub.sub_id]
    assert one["next_payment"]["amount"] == coming_charges(history.sub, 1)[0].amount
    assert read_api.get("/subscriptions/ffffffffffffffff").status_code == 404


def test_receipts_a_receipt_and_its_pdf(read_api: ApiClient, history) -> None:
    base = f"/customers/{history.account_id}/receipts"
    listed = read_api.get(base).json()
    assert [r["id"] for r in listed["data"]] == [history.receipt.url_id]
    one = read_api.get(f"{base}/{history.receipt.url_id}").json()
    assert one["amount"] == 999 and one["currency"] == "USD" and one["subscription"] == history.sub.sub_id
    pdf = read_api.get(f"{base}/{history.receipt.url_id}/pdf")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    # the file name the portal's download has, as docs/PORTAL.md names it
    assert pdf["Content-Disposition"] == f'attachment; filename="rpay-invoice-{history.receipt.Number}.pdf"' or \
        pdf["Content-Disposition"] == f'attachment; filename="rpay-receipt-{history.receipt.Number}.pdf"'
    assert read_api.get(f"{base}/R-2000-000001").status_code == 404
    # another customer's receipt is not found under this one
    other = make_customer_with_history("bob@example.com")
    assert read_api.get(f"/customers/{other.account_id}/receipts/{history.receipt.url_id}").status_code == 404


def test_products_coupons_and_disputes(read_api: ApiClient, db, moto_table) -> None:
    access.create_product("TEA", "Tea", 1500, "JPY")
    access.create_coupon("WELCOME", percent_off=20, amount_off=None, currency=None, duration="once",
                         duration_payments=None, max_uses=None, valid_from=None, valid_until=None, actor="t")
    DisputeEntry(DisputeEntry.pk(), DisputeEntry.sk(opened="2027-01-02T00:00:00+00:00", dispute_id="dp_1"),
                 DisputeId="dp_1", AccountId="a", ReceiptSK="REC#x", Amount=999, Currency="USD", Status="needs_response",
                 OpenedAt="2027-01-02T00:00:00+00:00", UpdatedAt="2027-01-02T00:00:00+00:00").save()
    assert [p["id"] for p in read_api.get("/products").json()["data"]] == ["TEA"]
    assert read_api.get("/products/TEA").json()["amount"] == 1500
    assert read_api.get("/products/NOPE").status_code == 404
    assert [c["id"] for c in read_api.get("/coupons").json()["data"]] == ["WELCOME"]
    assert read_api.get("/coupons/welcome").json()["percent_off"] == 20
    assert read_api.get("/coupons/NOPE").status_code == 404
    [dispute] = read_api.get("/disputes").json()["data"]
    assert dispute["id"] == "dp_1" and dispute["object"] == "dispute" and not dispute["closed"]


def test_lists_are_paged_by_an_opaque_cursor(read_api: ApiClient, db, moto_table) -> None:
    for n in range(5):
        access.create_product(f"P-{n}", f"Product {n}", 100 + n, "USD")
    seen, cursor, pages = [], None, 0
    while True:
        page = read_api.get("/products", limit=2, **({"cursor": cursor} if cursor else {})).json()
        seen += [p["id"] for p in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        assert page["has_more"] == (cursor is not None)
        if cursor is None:
            break
    assert seen == [f"P-{n}" for n in range(5)]
    assert pages == 3


def test_a_cursor_is_refused_by_another_list_or_when_forged(read_api: ApiClient, history) -> None:
    for n in range(3):
        access.create_product(f"P-{n}", f"Product {n}", 100, "USD")
    cursor = read_api.get("/products", limit=1).json()["next_cursor"]
    for path in ("/coupons", f"/customers/{history.account_id}/receipts"):
        refused = read_api.get(path, cursor=cursor)
        assert refused.status_code == 400 and error_of(refused)["param"] == "cursor"
    forged = signing.dumps({"PK": {"S": "ACC#x"}, "SK": {"S": "x"}}, salt="another")
    assert read_api.get("/products", cursor=forged).status_code == 400
    assert read_api.get("/products", cursor="garbage").status_code == 400


def test_bad_input_is_a_400_naming_the_field(read_api: ApiClient, db, moto_table) -> None:
    for params in ({"limit": 0}, {"limit": 101}, {"limit": "many"}):
        response = read_api.get("/products", **params)
        assert response.status_code == 400, params
        assert error_of(response)["param"] == "limit"
    missing = read_api.get("/customers")
    assert missing.status_code == 400 and error_of(missing)["param"] == "email"


def test_unknown_paths_and_methods_are_json(read_api: ApiClient, db, moto_table) -> None:
    for path in ("/nothing", "/products/TEA/nothing", "/"):
        response = read_api.get(path)
        assert response.status_code == 404, path
        error_of(response)
    wrong = read_api.client.delete("/api/v1/products", headers=read_api.headers())
    assert wrong.status_code == 405 and error_of(wrong)["type"] == "invalid_request_error"


def test_each_read_is_a_fixed_number_of_requests_and_never_a_scan(read_api: ApiClient, history, ddb_requests) -> None:
    sub = make_subscription(history.account, sku="TEA", today=date(2027, 1, 10))
    read_api.get("/products")  # the key's first use is written once
    auth = {"GetItem": 1, "UpdateItem": 1}  # the key, the rate counter
    calls = {
        f"/customers/{history.account_id}": {"GetItem": 1},
        f"/customers/{history.account_id}/subscriptions": {"Query": 1},
        f"/subscriptions/{sub.sub_id}": {"GetItem": 1, "Query": 1},
        f"/customers/{history.account_id}/receipts": {"Query": 1},
        f"/customers/{history.account_id}/receipts/{history.receipt.url_id}": {"GetItem": 2},
        "/products": {"Query": 1},
        "/coupons": {"Query": 1},
        "/disputes": {"Query": 1},
    }
    for path, expected in calls.items():
        ddb_requests.reset()
        assert read_api.get(path).status_code == 200, path
        counts = dict(ddb_requests.by_name())
        want = {name: auth.get(name, 0) + expected.get(name, 0) for name in {*auth, *expected}}
        assert counts == want, path


def test_events_after_an_id_oldest_first(read_api: ApiClient, history) -> None:
    with time_machine.travel(datetime.now(tz=UTC) + timedelta(seconds=30)):
        page = read_api.get("/events", limit=2).json()
        assert [e["object"] for e in page["data"]] == ["event", "event"] and page["has_more"]
        seen, after = [], None
        while True:
            page = read_api.get("/events", limit=3, **({"after": after} if after else {})).json()
            seen += page["data"]
            after = page["next_after"]
            if not page["has_more"]:
                break
    ids = [e["id"] for e in seen]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert "subscription.created" in {e["type"] for e in seen}
    created = next(e for e in seen if e["type"] == "subscription.created")
    assert created["data"]["object"] == "subscription" and created["customer"] == history.account_id
    bad = read_api.get("/events", after="nope")
    assert bad.status_code == 400 and error_of(bad)["param"] == "after"
