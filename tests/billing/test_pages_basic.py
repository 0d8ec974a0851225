"""Site-wide behaviour: the home page, 404 and the 503 page when DynamoDB is down."""

from __future__ import annotations

from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command

from billing.models import configure
from devtools.localengine import free_port


@pytest.mark.django_db
def test_home_is_the_seeded_customers_dashboard(client, moto_table) -> None:
    # Visitors get a landing page, customers their dashboard.
    call_command("seed_demo", stdout=StringIO())
    assert 'href="/signup/"' in client.get("/").content.decode()
    client.post("/login/", {"username": "customer@rpay.localhost", "password": "customer-demo-2026"})
    response = client.get("/")
    assert response.status_code == 200
    # The demo shows each portal state: an active and a paused subscription, one waiting for
    # the customer's bank (action required), one cancelled at the end of its period (still
    # served until then, so listed with the live ones, not under "Cancelled"), one whose
    # first payment waits for the bank (incomplete: listed, never counted).
    assert sorted(s.SKU for s in response.context["live"]) == ["COFFEE-BOX", "MUSIC-FAMILY", "NEWS-DAILY"]
    assert response.context["paused_count"] == 1 and response.context["cancelled"] == []
    listed = {s.SKU: s for s in response.context["listed"]}
    assert sorted(listed) == ["CLOUD-200", "COFFEE-BOX", "MUSIC-FAMILY", "NEWS-DAILY", "NEWS-PLUS"]
    ending = listed["CLOUD-200"]
    assert ending.Status == "cancelled" and ending.PaidThroughDate >= date.today().isoformat()


@pytest.mark.django_db
def test_404_page(client, moto_table) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


@pytest.mark.django_db
def test_dynamodb_down_gives_a_friendly_503(client, settings, caplog) -> None:
    from django.contrib.auth import get_user_model

    # logged in, so the home page needs DynamoDB (the landing page does not)
    client.force_login(get_user_model().objects.create_user("someone@example.com", password="x"))
    endpoint = f"http://127.0.0.1:{free_port()}"
    settings.DYNAMODB_ENDPOINT = endpoint
    configure(table_name="down_table", region="us-east-1", host=endpoint, max_retry_attempts=0,
              connect_timeout_seconds=1)
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    client.raise_request_exception = False
    response = client.get("/")
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    body = response.content.decode()
    assert "try again" in body.lower() and "Traceback" not in body
    assert any("503 for GET /" in r.getMessage() for r in caplog.records)
