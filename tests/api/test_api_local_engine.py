"""The API's conditional writes and one-Query pages on DynamoDB Local too (moto is the
other tests' engine): the rate counter's condition, the Idempotency-Key's claim, a page's
LastEvaluatedKey through the signed cursor."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client

from billing import access
from billing.actions import api_keys

pytestmark = pytest.mark.django_db


def test_keys_limits_idempotency_and_paging_on_the_local_engine(local_table, settings) -> None:
    settings.API_RATE_LIMIT = 6
    _, secret = api_keys.create_key("ci", "write", actor="test")
    auth = {"Authorization": f"Bearer {secret}"}
    client = Client()
    with time_machine.travel(datetime(2027, 1, 10, 12, 0, 0, tzinfo=UTC), tick=False):
        body = json.dumps({"sku": "P-1", "name": "One", "amount": 100, "currency": "USD"})
        first = client.post("/api/v1/products", body, content_type="application/json",
                            headers={**auth, "Idempotency-Key": "one"})
        again = client.post("/api/v1/products", body, content_type="application/json",
                            headers={**auth, "Idempotency-Key": "one"})
        assert first.status_code == again.status_code == 201 and again["Idempotent-Replayed"] == "true"
        access.create_product("P-2", "Two", 100, "USD")
        page = client.get("/api/v1/products", {"limit": 1}, headers=auth).json()
        assert [p["id"] for p in page["data"]] == ["P-1"] and page["next_cursor"]
        rest = client.get("/api/v1/products", {"limit": 1, "cursor": page["next_cursor"]}, headers=auth).json()
        assert [p["id"] for p in rest["data"]] == ["P-2"]
        statuses = [client.get("/api/v1/products", headers=auth).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]  # 6 calls in the window: 2 posts, 2 pages, 2 more
    [key] = access.list_api_keys()
    api_keys.revoke_key(key, actor="test")
    assert client.get("/api/v1/products", headers=auth).status_code == 401
