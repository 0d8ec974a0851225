"""Site-wide behaviour: the home page, 404 and the 503 page when DynamoDB is down."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from billing.localengine import free_port
from billing.models import configure


@pytest.mark.django_db
def test_home_shows_what_the_table_holds(client, moto_table) -> None:
    call_command("seed_demo", stdout=None)
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="accounts">5<' in html


@pytest.mark.django_db
def test_404_page(client, moto_table) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


@pytest.mark.django_db
def test_dynamodb_down_gives_a_friendly_503(client, settings, caplog) -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("someone@example.com", password="x")
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
