"""The staff pages of the webhook endpoints: who sees and who changes them, adding one
(its secret shown once; a refused URL a field error), the delivery log with its Resend,
Send test event, rotation, disable and enable, and the banner of a disabled endpoint."""

from __future__ import annotations

import pytest
from django.urls import reverse

from billing import access, batches
from billing.actions import webhook_endpoints as actions
from billing.models import EndpointStatus
from tests.billing.webhook_receiver import Receiver
from tests.builders import make_user


@pytest.fixture
def receiver(settings):
    settings.WEBHOOKS_SETTLE_SECONDS = 0
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    made = Receiver().start()
    yield made
    made.stop()


def login(client, roles):
    client.force_login(make_user(f"{'-'.join(roles) or 'none'}@example.com", staff=True, roles=roles))
    return client


def test_who_sees_and_who_changes(db, moto_table, client) -> None:
    endpoint, _ = actions.create_endpoint("http://127.0.0.1:9/hooks", None, actor="x")
    page = reverse("admin:staff_webhook_endpoint", args=[endpoint.EndpointId])
    add = reverse("admin:staff_webhook_endpoint_add")
    rotate = reverse("admin:staff_webhook_endpoint_rotate", args=[endpoint.EndpointId])
    login(client, ["support"])
    listing = client.get(reverse("admin:staff_webhook_endpoints"))
    assert listing.status_code == 200 and "127.0.0.1:9/hooks" in listing.content.decode()
    assert "Add endpoint" not in listing.content.decode() and "Webhook endpoints" in listing.content.decode()
    assert client.get(page).status_code == 200 and b"Rotate secret" not in client.get(page).content
    assert client.get(add).status_code == 403 and client.post(rotate).status_code == 403
    client.logout()
    login(client, ["catalog"])
    assert client.get(page).status_code == 403
    client.logout()
    login(client, ["admin"])
    assert client.get(page).status_code == 200 and b"Rotate secret" in client.get(page).content


def test_add_shows_the_secret_once_and_refuses_an_unsafe_url(db, moto_table, client, settings) -> None:
    login(client, ["admin"])
    add = reverse("admin:staff_webhook_endpoint_add")
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = False
    refused = client.post(add, {"url": "https://127.0.0.1/hooks", "event_types": ["payment.succeeded"]})
    assert refused.status_code == 200 and "This URL is refused" in refused.content.decode()
    assert access.list_endpoints() == []
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    made = client.post(add, {"url": "http://127.0.0.1:9/hooks", "event_types": ["payment.succeeded"],
                             "description": "the CRM"})
    [endpoint] = access.list_endpoints()
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    assert endpoint.Secret in made.content.decode() and endpoint.EventTypes == ["payment.succeeded"]
    page = client.get(reverse("admin:staff_webhook_endpoint", args=[endpoint.EndpointId])).content.decode()
    assert endpoint.Secret not in page and "the CRM" in page


def test_log_resend_test_event_rotate_disable_enable(db, moto_table, client, receiver) -> None:
    login(client, ["admin"])
    endpoint, receiver.secrets["s"] = actions.create_endpoint(receiver.url, None, actor="x")
    access.new_merchant_event("refund.created", account_id="a1", object_type="refund", object_id="r1",
                              data={"id": "r1"}).save()
    batches.Sender().run_pass()
    page = reverse("admin:staff_webhook_endpoint", args=[endpoint.EndpointId])
    html = client.get(page).content.decode()
    assert "refund.created" in html and "delivered" in html and ">200<" in html
    [delivery] = access.delivery_log(endpoint.EndpointId)
    resend = reverse("admin:staff_webhook_delivery_resend", args=[endpoint.EndpointId, delivery.SK])
    assert client.post(resend).status_code == 302
    assert client.post(reverse("admin:staff_webhook_endpoint_test", args=[endpoint.EndpointId])).status_code == 302
    batches.Sender().run_pass()
    assert [r.body["type"] for r in receiver.delivered()] == ["refund.created", "refund.created", "webhook.test"]

    rotated = client.post(reverse("admin:staff_webhook_endpoint_rotate", args=[endpoint.EndpointId]))
    fresh = access.get_endpoint(endpoint.EndpointId)
    assert fresh.Secret in rotated.content.decode() and fresh.PreviousSecret == receiver.secrets["s"]

    status = reverse("admin:staff_webhook_endpoint_status", args=[endpoint.EndpointId])
    client.post(status, {"status": "disabled"})
    assert access.get_endpoint(endpoint.EndpointId).Status == EndpointStatus.DISABLED
    client.post(status, {"status": "enabled"})
    assert access.get_endpoint(endpoint.EndpointId).Status == EndpointStatus.ENABLED


def test_a_disabled_endpoint_has_a_banner(db, moto_table, client) -> None:
    endpoint, _ = actions.create_endpoint("http://127.0.0.1:9/hooks", None, actor="x")
    access.mark_endpoint_failing(endpoint.EndpointId, access.utc_now())
    access.disable_failing_endpoint(endpoint.EndpointId)
    login(client, ["support"])
    listing = client.get(reverse("admin:staff_webhook_endpoints")).content.decode()
    assert f'data-testid="disabled-banner-{endpoint.EndpointId}"' in listing
    page = client.get(reverse("admin:staff_webhook_endpoint", args=[endpoint.EndpointId])).content.decode()
    assert 'data-testid="disabled-banner"' in page
