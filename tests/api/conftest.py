"""The API's fixtures: keys of each scope, made as the command makes them, and a client
that sends one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from billing.actions import api_keys


@dataclass
class ApiClient:
    """A Django test client that calls /api/v1/ with one key."""

    secret: str
    client: Client

    def headers(self, idempotency_key: str | None = None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.secret}"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return headers

    def get(self, path: str, **params: Any):
        return self.client.get("/api/v1" + path, params, headers=self.headers())

    def post(self, path: str, body: dict | None = None, *, key: str | None = None, raw: str | None = None):
        data = raw if raw is not None else json.dumps(body or {})
        return self.client.post("/api/v1" + path, data, content_type="application/json",
                                headers=self.headers(key))

    def delete(self, path: str, *, key: str | None = None):
        return self.client.delete("/api/v1" + path, headers=self.headers(key))


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"type", "message", "param"}, body
    assert response["Content-Type"].startswith("application/json")
    return body["error"]


@pytest.fixture
def write_api(db, moto_table) -> ApiClient:
    _, secret = api_keys.create_key("warehouse", "write", actor="test")
    return ApiClient(secret, Client(enforce_csrf_checks=True))


@pytest.fixture
def read_api(db, moto_table) -> ApiClient:
    _, secret = api_keys.create_key("crm", "read", actor="test")
    return ApiClient(secret, Client(enforce_csrf_checks=True))
