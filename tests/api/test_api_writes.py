"""The API's writes: each through the pages' action (its audit event names the key), each
idempotent (a repeat replays, another body is a 409), and their refusals as JSON."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.db import close_old_connections

from billing import access
from billing.api import idempotency
from core.pages import today
from tests.api.conftest import ApiClient, error_of
from tests.builders import DECLINED_NUMBER, card, fresh, make_customer_with_history


@pytest.fixture
def scheduled(db, moto_table):
    """An active subscription paid through the day before its next payment (a week on)."""
    history = make_customer_with_history()
    day = today()
    sub = access.set_schedule(history.sub, next_payment=day + timedelta(days=7), last_payment=day - timedelta(days=20),
                              next_reminder=day + timedelta(days=1), last_reminder=day - timedelta(days=20))
    mail.outbox.clear()
    return history, fresh(sub)


def actions_by(account_id: str, actor: str = "api:warehouse") -> list[str]:
    return sorted(e.Action for e in access.get_events_by_account(account_id) if e.Actor == actor)


def assert_idempotent(api: ApiClient, path: str, body: dict, first, other_body: dict) -> None:
    """The same key and body replay the first answer; another (valid) body with it is a 409."""
    again = api.post(path, body, key="k-" + path)
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert again["Idempotent-Replayed"] == "true"
    other = api.post(path, other_body, key="k-" + path)
    assert other.status_code == 409 and error_of(other)["type"] == "idempotency_error"


def test_cancel_at_period_end_then_keep(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    path = f"/subscriptions/{sub.sub_id}/cancel"
    body = {"at": "period_end", "reason": "not_using"}
    first = write_api.post(path, body, key="k-" + path)
    assert first.status_code == 200, first.content
    assert first.json()["status"] == "cancelling" and first.json()["cancel_at_period_end"]
    assert first.json()["status_label"].startswith("Cancels on ")
    assert_idempotent(write_api, path, body, first, {"at": "now"})
    kept = write_api.post(f"/subscriptions/{sub.sub_id}/keep", key="keep-1")
    assert kept.status_code == 200 and kept.json()["status"] == "active"
    assert actions_by(history.account_id) == ["subscription.cancelled", "subscription.kept"]
    assert write_api.post(f"/subscriptions/{sub.sub_id}/keep").status_code == 409


def test_cancel_now(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    done = write_api.post(f"/subscriptions/{sub.sub_id}/cancel", {"at": "now"})
    assert done.status_code == 200 and done.json()["status"] == "ended"
    again = write_api.post(f"/subscriptions/{sub.sub_id}/cancel", {"at": "now"})
    assert again.status_code == 409 and error_of(again)["type"] == "invalid_state"


def test_pause_and_resume(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    path = f"/subscriptions/{sub.sub_id}/pause"
    first = write_api.post(path, {"payments": 1}, key="k-" + path)
    assert first.status_code == 200, first.content
    assert first.json()["status"] == "paused"
    assert_idempotent(write_api, path, {"payments": 1}, first, {"payments": 2})
    assert write_api.post(path, {"payments": 1}).status_code == 409  # already paused
    resumed = write_api.post(f"/subscriptions/{sub.sub_id}/resume", key="r")
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    assert actions_by(history.account_id) == ["subscription.paused", "subscription.resumed"]


def test_change_the_payment_day(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    path = f"/subscriptions/{sub.sub_id}/payment_day"
    first = write_api.post(path, {"payment_day": 3}, key="k-" + path)
    assert first.status_code == 200 and first.json()["payment_day"] == 3
    assert first.json()["next_payment"]["date"] == sub.NextPaymentDate  # the paid days stay paid
    assert_idempotent(write_api, path, {"payment_day": 3}, first, {"payment_day": 4})
    bad = write_api.post(path, {"payment_day": 32})
    assert bad.status_code == 400 and error_of(bad)["param"] == "payment_day"
    assert actions_by(history.account_id) == ["subscription.payment_day_changed"]


def test_switch_to_a_cheaper_product(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    path = f"/subscriptions/{sub.sub_id}/switch"
    first = write_api.post(path, {"product": "NEWS-LITE"}, key="k-" + path)
    assert first.status_code == 200, first.content
    assert first.json()["product"] == "NEWS-LITE" and first.json()["amount"] == 500
    assert_idempotent(write_api, path, {"product": "NEWS-LITE"}, first, {"product": "GYM"})
    refused = write_api.post(path, {"product": "NOPE"})
    assert refused.status_code == 409 and "not offered" in error_of(refused)["message"]


def test_apply_a_coupon(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    access.create_coupon("HALF", percent_off=50, amount_off=None, currency=None, duration="once",
                         duration_payments=None, max_uses=None, valid_from=None, valid_until=None, actor="t")
    path = f"/subscriptions/{sub.sub_id}/coupon"
    first = write_api.post(path, {"code": "half"}, key="k-" + path)
    assert first.status_code == 200, first.content
    assert first.json()["coupon"]["code"] == "HALF"
    assert first.json()["next_payment"]["discount"] > 0
    assert_idempotent(write_api, path, {"code": "half"}, first, {"code": "HALF"})
    unknown = write_api.post(path, {"code": "NOPE"})
    assert unknown.status_code == 400 and error_of(unknown)["param"] == "code"


def test_refund_a_receipt(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    path = f"/customers/{history.account_id}/receipts/{history.receipt.url_id}/refund"
    first = write_api.post(path, {"amount": 300, "reason": "late delivery"}, key="k-" + path)
    assert first.status_code == 200, first.content
    assert first.json()["amount_refunded"] == 300 and len(first.json()["refunds"]) == 1
    assert_idempotent(write_api, path, {"amount": 300, "reason": "late delivery"}, first, {"amount": 301})
    assert access.get_receipt(history.account_id, history.receipt.SK).RefundedAmount == 300
    too_much = write_api.post(path, {"amount": 5000})
    assert too_much.status_code == 400 and error_of(too_much)["param"] == "amount"
    assert "staff.refund" in actions_by(history.account_id)


def test_create_a_product_and_a_coupon(write_api: ApiClient, db, moto_table) -> None:
    body = {"sku": "TEA-BOX", "name": "Tea box", "amount": 1500, "currency": "eur", "trial_days": 7}
    first = write_api.post("/products", body, key="k-/products")
    assert first.status_code == 201 and first.json()["id"] == "TEA-BOX" and first.json()["currency"] == "EUR"
    assert_idempotent(write_api, "/products", body, first, {**body, "name": "Tea"})
    taken = write_api.post("/products", body)
    assert taken.status_code == 409 and error_of(taken)["param"] == "sku"
    assert write_api.post("/products", {**body, "sku": "X-1", "currency": "XXX"}).status_code == 400
    coupon = {"code": "spring", "amount_off": 200, "currency": "EUR", "duration": "repeating", "duration_payments": 3}
    made = write_api.post("/coupons", coupon, key="k-/coupons")
    assert made.status_code == 201 and made.json()["id"] == "SPRING"
    assert_idempotent(write_api, "/coupons", coupon, made, {**coupon, "code": "SUMMER"})
    both = write_api.post("/coupons", {"code": "BOTH", "percent_off": 5, "amount_off": 5, "currency": "EUR"})
    assert both.status_code == 400
    events = access.get_events_by_account("CATALOG") + access.get_events_by_account("COUPONS")
    assert {e.Actor for e in events} == {"api:warehouse"}


@pytest.mark.parametrize("raw", ["{not json", "[]", '{"payment_day": "soon"}', '{"payment_day": 3, "extra": 1}'])
def test_a_bad_body_is_a_400(write_api: ApiClient, scheduled, raw: str) -> None:
    history, sub = scheduled
    response = write_api.post(f"/subscriptions/{sub.sub_id}/payment_day", raw=raw)
    assert response.status_code == 400, response.content
    error_of(response)


def test_writes_need_no_csrf_token_and_unknown_ids_are_404(write_api: ApiClient, db, moto_table) -> None:
    # the client enforces CSRF checks, as a browser's session would be: a key needs none
    missing = write_api.post("/subscriptions/ffffffffffffffff/cancel", {"at": "now"})
    assert missing.status_code == 404 and error_of(missing)["param"] == "subscription_id"


def test_an_idempotency_key_too_long_is_a_400(write_api: ApiClient, db, moto_table) -> None:
    response = write_api.post("/products", {"sku": "A-1", "name": "A", "amount": 1, "currency": "USD"}, key="k" * 300)
    assert response.status_code == 400 and error_of(response)["param"] == "Idempotency-Key"


def test_two_requests_at_once_with_one_key_run_once(write_api: ApiClient, scheduled, monkeypatch) -> None:
    history, sub = scheduled
    entered, release = threading.Event(), threading.Event()
    real = access.begin_idempotent

    def slow_begin(*args, **kwargs):
        claimed = real(*args, **kwargs)
        if claimed is None:  # the one that runs waits until the other has been answered
            entered.set()
            release.wait(10)
        return claimed

    monkeypatch.setattr(access, "begin_idempotent", slow_begin)
    path = f"/subscriptions/{sub.sub_id}/payment_day"
    answers: list = []

    def call() -> None:
        answers.append(write_api.post(path, {"payment_day": 3}, key="same"))
        close_old_connections()

    first = threading.Thread(target=call)
    first.start()
    assert entered.wait(10)
    second = write_api.post(path, {"payment_day": 3}, key="same")
    release.set()
    first.join(10)
    assert second.status_code == 409 and "in progress" in error_of(second)["message"]
    assert answers[0].status_code == 200
    assert actions_by(history.account_id) == ["subscription.payment_day_changed"]
    assert idempotency.HEADER == "Idempotency-Key"


def test_two_refunds_of_one_amount_with_two_keys_are_two_refunds(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    path = f"/customers/{history.account_id}/receipts/{history.receipt.url_id}/refund"
    assert write_api.post(path, {"amount": 100}, key="first").status_code == 200
    assert write_api.post(path, {"amount": 100}, key="second").status_code == 200
    assert access.get_receipt(history.account_id, history.receipt.SK).RefundedAmount == 200


def test_switch_to_a_dearer_product_charges_the_difference_now(write_api: ApiClient, scheduled) -> None:
    history, sub = scheduled
    access.create_product("NEWS-PLUS", "News Plus", 1999, "USD")
    # a declined card: a 409 card_error, nothing switched
    access.replace_card(sub, card(DECLINED_NUMBER), actor="test")
    declined = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"product": "NEWS-PLUS"})
    assert declined.status_code == 409 and error_of(declined)["type"] == "card_error"
    assert fresh(sub).SKU == "NEWS-DAILY"
    access.replace_card(fresh(sub), card(), actor="test")  # a card the simulated gateway takes
    done = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"product": "NEWS-PLUS"}, key="up")
    assert done.status_code == 200, done.content
    assert done.json()["product"] == "NEWS-PLUS" and done.json()["amount"] == 1999
    assert "subscription.switched" in actions_by(history.account_id)


def test_an_unexpected_failure_is_a_json_500_without_a_trace(write_api: ApiClient, db, moto_table,
                                                             monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(access, "products_page", broken)
    response = write_api.get("/products")
    assert response.status_code == 500
    error = error_of(response)
    assert error["type"] == "api_error" and "secret" not in response.content.decode()


def test_a_claim_left_running_by_a_dead_process_is_taken_again(write_api: ApiClient, db, moto_table) -> None:
    [key] = access.list_api_keys()
    start = datetime(2027, 1, 10, 12, 0, 0, tzinfo=UTC)
    body = {"sku": "P-9", "name": "Nine", "amount": 100, "currency": "USD"}
    with time_machine.travel(start, tick=False):
        assert access.begin_idempotent(key, idempotency.key_hash("dead"), "whatever") is None  # never finished
    with time_machine.travel(start + timedelta(minutes=1), tick=False):
        assert write_api.post("/products", body, key="dead").status_code == 409  # in progress
    with time_machine.travel(start + timedelta(minutes=11), tick=False):
        assert write_api.post("/products", body, key="dead").status_code == 201


def test_register_a_webhook_endpoint(write_api: ApiClient, read_api: ApiClient, settings) -> None:
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = False
    body = {"url": "https://hooks.example.com/rpay", "event_types": ["payment.succeeded", "refund.created"]}
    # the name is not resolved here: the guard is asked about the address at send time too
    refused = write_api.post("/webhook_endpoints", {**body, "url": "http://169.254.169.254/latest"})
    assert refused.status_code == 400 and error_of(refused)["param"] == "url"
    unknown = write_api.post("/webhook_endpoints", {**body, "url": "https://93.184.215.14/x", "event_types": ["nope"]})
    assert unknown.status_code == 400 and error_of(unknown)["param"] == "event_types"
    body["url"] = "https://93.184.215.14/rpay"
    made = write_api.post("/webhook_endpoints", body, key="k-/webhook_endpoints")
    assert made.status_code == 201, made.content
    endpoint = made.json()
    assert endpoint["object"] == "webhook_endpoint" and endpoint["secret"].startswith("whsec_")
    assert endpoint["event_types"] == ["payment.succeeded", "refund.created"] and endpoint["status"] == "enabled"
    assert_idempotent(write_api, "/webhook_endpoints", body, made, {**body, "description": "other"})
    # a read key lists them, never with the secret; it may not make one
    listed = read_api.get("/webhook_endpoints").json()
    assert [e["id"] for e in listed["data"]] == [endpoint["id"]] and "secret" not in listed["data"][0]
    assert read_api.post("/webhook_endpoints", body).status_code == 403
