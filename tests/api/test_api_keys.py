"""API keys: Bearer only, a read key refused the writes, a revoked key refused at once,
the rate limit, the last use, the command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.test import Client

from billing import access
from billing.access.api_keys import key_hash
from billing.actions import api_keys
from billing.models import ApiKey, AuditEvent
from tests.api.conftest import ApiClient, error_of


def test_no_key_unknown_key_and_another_scheme_are_401(write_api: ApiClient) -> None:
    client = Client()
    for headers in ({}, {"Authorization": "Bearer rpay_not-a-key"}, {"Authorization": f"Basic {write_api.secret}"},
                    {"Authorization": "Bearer " + "x" * 5000}):
        response = client.get("/api/v1/products", headers=headers)
        assert response.status_code == 401, headers
        assert error_of(response)["type"] == "authentication_error"


def test_the_key_is_stored_only_as_its_hash(write_api: ApiClient) -> None:
    [key] = access.list_api_keys()
    assert key.key_hash == key_hash(write_api.secret)
    assert write_api.secret not in str(key.attribute_values)
    assert write_api.secret.startswith("rpay_") and len(write_api.secret) > 40


def test_a_read_key_is_refused_a_write(read_api: ApiClient) -> None:
    response = read_api.post("/products", {"sku": "TEA", "name": "Tea", "amount": 500, "currency": "EUR"})
    assert response.status_code == 403
    assert error_of(response)["type"] == "permission_error"
    assert access.get_product("TEA") is None
    assert read_api.get("/products").status_code == 200


def test_a_revoked_key_is_refused_from_the_next_call(write_api: ApiClient) -> None:
    assert write_api.get("/products").status_code == 200
    [key] = access.list_api_keys()
    api_keys.revoke_key(key, actor="admin@example.com")
    response = write_api.get("/products")
    assert response.status_code == 401
    assert "revoked" in error_of(response)["message"]


def test_past_the_rate_limit_a_key_gets_429_with_retry_after(write_api: ApiClient, settings) -> None:
    settings.API_RATE_LIMIT, settings.API_RATE_WINDOW_SECONDS = 3, 60
    with time_machine.travel(datetime(2027, 1, 10, 12, 0, 15, tzinfo=UTC), tick=False):
        assert [write_api.get("/products").status_code for _ in range(3)] == [200, 200, 200]
        refused = write_api.get("/products")
        assert refused.status_code == 429
        assert refused["Retry-After"] == "45"
        assert error_of(refused)["type"] == "rate_limit_error"
    with time_machine.travel(datetime(2027, 1, 10, 12, 1, 0, tzinfo=UTC), tick=False):
        assert write_api.get("/products").status_code == 200  # the next window


def test_the_rate_limit_is_per_key(write_api: ApiClient, read_api: ApiClient, settings) -> None:
    settings.API_RATE_LIMIT = 1
    with time_machine.travel(datetime(2027, 1, 10, 12, 0, 0, tzinfo=UTC), tick=False):
        assert write_api.get("/products").status_code == 200
        assert write_api.get("/products").status_code == 429
        assert read_api.get("/products").status_code == 200


def test_the_last_use_is_written_at_most_once_a_minute(write_api: ApiClient) -> None:
    start = datetime(2027, 1, 10, 12, 0, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False):
        write_api.get("/products")
    [key] = access.list_api_keys()
    assert key.LastUsedAt == "2027-01-10T12:00:00+00:00"
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        write_api.get("/products")
    assert access.list_api_keys()[0].LastUsedAt == "2027-01-10T12:00:00+00:00"
    with time_machine.travel(start + timedelta(seconds=61), tick=False):
        write_api.get("/products")
    assert access.list_api_keys()[0].LastUsedAt == "2027-01-10T12:01:01+00:00"


def test_the_command_creates_lists_and_revokes(db, moto_table) -> None:
    out = StringIO()
    call_command("api_keys", "create", "--name", "ci", "--scope", "read", stdout=out, stderr=StringIO())
    secret = out.getvalue().strip()
    assert Client().get("/api/v1/products", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    listed = StringIO()
    call_command("api_keys", "list", stdout=listed)
    key_id, name, scope = listed.getvalue().split("\t")[:3]
    assert (name, scope) == ("ci", "read")
    call_command("api_keys", "revoke", key_id, stdout=StringIO())
    assert Client().get("/api/v1/products", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    events = list(AuditEvent.query(AuditEvent.pk(account_id="APIKEYS")))
    assert sorted(e.Action for e in events) == ["staff.create_api_key", "staff.revoke_api_key"]


def test_the_command_refuses_an_unknown_key(db, moto_table) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("api_keys", "revoke", "0123456789ab", stdout=StringIO())


def test_a_key_lookup_is_one_consistent_get(write_api: ApiClient, ddb_requests) -> None:
    write_api.get("/products")  # the first use is written
    ddb_requests.reset()
    write_api.get("/products")
    # the key (GetItem), the rate counter (UpdateItem), the page (Query): nothing else
    assert ddb_requests.by_name() == {"GetItem": 1, "UpdateItem": 1, "Query": 1}
    assert ApiKey.Meta.table_name
