"""Closing an account erases every copy of the customer's data the docs say is erased
(docs/PORTAL.md, "Closing an account"), wherever in the table it sits: the account's
partition, its audit notes (a cancel comment kept only there, or cut short in the note), the
merchant's events that ``GET /api/v1/events`` serves, the webhook deliveries made of them (queued, or delivered with the receiver's answer),
and the shop's orders. Proved by reading the WHOLE of both tables afterwards (a Scan, which
only a test may do) for the address and the customer's own words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.test import Client

from billing import access, batches
from billing.actions import api_keys, data_rights, lifecycle
from billing.actions import webhook_endpoints as endpoint_actions
from billing.models import BillingItem, DeliveryStatus, Subscription
from core.dynamo.engine import dynamodb_client
from shop.models import ShopItem
from tests.builders import make_customer_with_history
from tests.conftest import ENGINES
from tests.shop.conftest import _shop_table

pytestmark = pytest.mark.django_db

EMAIL = "pat.erasure@example.com"
NAME = "Pat Erasure-Example"
# The first comment is only in the audit note once the cancel is undone ("keep"); the
# second is longer than the note holds, so the note has only its beginning.
KEPT_COMMENT = "Please tell Dr Quentin Marchetti I moved to Via Larga 7"
LONG_COMMENT = "My carer Ann Oddfellow-Birch reads these to me. " * 20
PERSONAL = (EMAIL, NAME, "Quentin Marchetti", "Ann Oddfellow-Birch", "Via Larga 7")


@pytest.fixture(params=ENGINES)
def tables(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    settings.WEBHOOKS_SETTLE_SECONDS = 0
    yield from _shop_table(request.param, request, settings)


def scan_all(table: str) -> list[dict]:
    """Every item of ``table``, as DynamoDB stores it: a test-only Scan, page by page."""
    client, items, start = dynamodb_client(), [], None
    while True:
        page = client.scan(TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def found(table: str) -> list[tuple[str, str, list[str]]]:
    """The items of ``table`` quoting a personal text (receipts excepted: kept as issued)."""
    hits = []
    for item in scan_all(table):
        if item.get("EntityType", {}).get("S") == "Receipt":
            continue
        text = json.dumps(item)
        quoted = [p for p in PERSONAL if p in text or json.dumps(p)[1:-1] in text]
        if quoted:
            hits.append((item["PK"]["S"], item["SK"]["S"], quoted))
    return hits


def a_customer_who_did_everything() -> tuple[str, str]:
    """Subscribed, cancelled with comments (one undone), a shop order, webhooks queued and
    the merchant's events written. Returns the account id and a pending delivery's endpoint."""
    from shop import access as shop_access
    from shop.checkout import checkout
    from tests.shop.helpers import build_shop, request

    # An endpoint that cannot be reached: its deliveries stay queued (pending).
    endpoint, _secret = endpoint_actions.create_endpoint("https://hooks.example.invalid/rpay", None,
                                                         actor="staff@example.com")
    pat = make_customer_with_history(EMAIL)
    today = date.today()
    # paid for the next days (as a first payment leaves it), so the cancel can be undone
    pat.sub.update(actions=[Subscription.PaidThroughDate.set((today + timedelta(days=20)).isoformat())])
    lifecycle.cancel_at_period_end(pat.sub, today=today, actor=EMAIL, reason="too_expensive", comment=KEPT_COMMENT)
    fresh = access.get_subscription(pat.account_id, pat.sub.sub_id, pat.sub.key_sku)
    lifecycle.keep(fresh, today=today, actor=EMAIL)
    lifecycle.cancel_now(pat.past_due, today=today, actor=EMAIL, reason="other", comment=LONG_COMMENT)
    shop_access.create_customer(pat.account_id, EMAIL, NAME)
    build_shop()
    checkout(request(("album", 1), customer_id=pat.account_id))

    batches.Sender().fan_out(access.get_endpoint(endpoint.EndpointId))
    log = access.delivery_log(endpoint.EndpointId)
    assert log and all(d.Status == DeliveryStatus.PENDING for d in log)
    assert any(EMAIL in d.Payload for d in log)  # what the close must not leave queued
    # One delivered, its receiver's answer echoing the body (the log keeps the first 1 KB).
    delivered = log[-1]
    assert access.claim_delivery(delivered, owner="test", now=datetime.now(UTC), lease=timedelta(seconds=30))
    assert access.record_attempt(delivered, owner="test", status=DeliveryStatus.SUCCEEDED, code=200,
                                 response=delivered.Payload[:1024], duration_ms=5, next_attempt=None)
    return pat.account_id, endpoint.EndpointId


def test_closing_leaves_the_address_and_the_comments_nowhere_in_either_table(tables) -> None:
    account_id, endpoint_id = a_customer_who_did_everything()
    everywhere = found(BillingItem.Meta.table_name) + found(ShopItem.Meta.table_name)
    assert {p for *_, quoted in everywhere for p in quoted} >= {EMAIL, "Quentin Marchetti", "Ann Oddfellow-Birch"}

    data_rights.close_account(account_id, today=date.today())

    left = found(BillingItem.Meta.table_name)
    assert left == [], "\n".join(map(str, left))
    assert found(ShopItem.Meta.table_name) == []
    # The events and the deliveries are kept, erased: the merchant still hears what happened.
    events = [e for e in access.events_after(None, limit=1000)[0] if e.AccountId == account_id]
    assert events and {e.Data.get("email") for e in events if e.ObjectType == "subscription"} == {
        access.pseudonym(account_id)}
    log = access.delivery_log(endpoint_id)
    assert log and all(json.loads(d.Payload)["data"]["customer"] == account_id for d in log)
    assert {d.Status for d in log} == {DeliveryStatus.PENDING, DeliveryStatus.SUCCEEDED}


def test_the_events_api_serves_no_address_after_the_close(tables) -> None:
    account_id, _ = a_customer_who_did_everything()
    _, secret = api_keys.create_key("crm", "read", actor="test")
    client = Client()

    def served() -> str:
        with time_machine.travel(datetime.now(UTC) + timedelta(minutes=1)):  # the events have settled
            response = client.get("/api/v1/events", {"limit": 100}, headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 200, response.content
        return response.content.decode()

    assert EMAIL in served()
    data_rights.close_account(account_id, today=date.today())
    body = served()
    assert not [p for p in PERSONAL if p in body]
    assert access.pseudonym(account_id) in body
