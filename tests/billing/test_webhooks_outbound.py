"""Outbound webhooks, end to end against a real HTTP receiver on the loopback that verifies
every signature with the ``standardwebhooks`` library: delivery of every event type, in
order; an endpoint's choice of types; the receiver down for two days; secret rotation;
three days of failures disabling the endpoint and telling staff; the command's summary."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access, batches
from billing.actions import webhook_endpoints as actions
from billing.models import DeliveryStatus, EndpointStatus, WebhookEndpoint
from billing.rules.webhook_retries import WEBHOOK_EVENT_TYPES
from core.pages import today
from tests.billing.webhook_receiver import Receiver


@pytest.fixture
def webhook_settings(settings):
    settings.WEBHOOKS_SETTLE_SECONDS = 0
    settings.WEBHOOKS_TIMEOUT_SECONDS = 3
    settings.WEBHOOKS_LEASE_MARGIN_SECONDS = 2
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    return settings


@pytest.fixture
def receiver():
    made = Receiver().start()
    yield made
    made.stop()


def emit(event_type: str, n: int = 0) -> str:
    event = access.new_merchant_event(event_type, account_id="acc1", object_type=event_type.split(".")[0],
                                      object_id=f"obj{n}", data={"object": event_type.split(".")[0], "id": f"obj{n}",
                                                                 "n": n})
    event.save()
    return event.EventId


def register(receiver: Receiver, types: list[str] | None = None, name: str = "current") -> WebhookEndpoint:
    endpoint, secret = actions.create_endpoint(receiver.url, types, actor="staff@example.com")
    receiver.secrets[name] = secret
    return endpoint


def deliveries(endpoint: WebhookEndpoint) -> list:
    return list(reversed(access.delivery_log(endpoint.EndpointId)))


def test_every_event_type_is_delivered_signed_in_order_once(moto_table, webhook_settings, receiver) -> None:
    endpoint = register(receiver)
    ids = [emit(t, n) for n, t in enumerate(WEBHOOK_EVENT_TYPES)]

    summary = batches.Sender().run_pass()

    assert receiver.ids() == ids
    assert [r.body["type"] for r in receiver.delivered()] == list(WEBHOOK_EVENT_TYPES)
    first = receiver.delivered()[0]
    assert first.body["data"] == {"object": "subscription", "id": "obj0", "n": 0}
    assert first.body["id"] == ids[0] and first.body["timestamp"]
    assert first.headers["webhook-signature"].startswith("v1,") and " " not in first.headers["webhook-signature"]
    assert summary.counts["succeeded"] == len(ids) and summary.counts["queued"] == len(ids)
    log = deliveries(endpoint)
    assert [d.Status for d in log] == [DeliveryStatus.SUCCEEDED] * len(ids)
    assert all(d.Attempts == 1 and d.LastStatusCode == 200 and d.LastResponse == "ok" for d in log)
    # A second pass finds nothing new, and reads the queue from where it ended.
    again = batches.Sender().run_pass()
    assert again.counts["succeeded"] == 0 and receiver.ids() == ids
    assert access.get_endpoint(endpoint.EndpointId).DoneThrough == ids[-1]


def test_an_endpoint_gets_only_the_types_it_asked_for(moto_table, webhook_settings, receiver) -> None:
    register(receiver, ["payment.succeeded", "refund.created"])
    emit("subscription.created")
    wanted = [emit("payment.succeeded", 1), emit("refund.created", 2)]
    emit("payment.failed", 3)
    batches.Sender().run_pass()
    assert receiver.ids() == wanted


def test_an_endpoint_hears_only_events_made_after_it(moto_table, webhook_settings, receiver) -> None:
    emit("payment.succeeded", 0)
    register(receiver)
    later = emit("payment.succeeded", 1)
    batches.Sender().run_pass()
    assert receiver.ids() == [later]


def test_receiver_down_two_days_then_everything_delivered_oldest_first_each_once(
        moto_table, webhook_settings, receiver) -> None:
    start = datetime(2027, 3, 1, 9, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        endpoint = register(receiver)
        receiver.stop()  # down: connections refused
        ids = [emit("payment.succeeded", n) for n in range(6)]
        sender = batches.Sender()
        attempts = 0
        while access.utc_now() < start + timedelta(days=2):
            summary = sender.run_pass()
            attempts += summary.counts["failed"]
            assert summary.counts["succeeded"] == 0
            clock.shift(timedelta(minutes=20))
        head, *rest = deliveries(endpoint)
        # Head of line: only the oldest was tried, on the retry schedule; the others wait.
        assert head.EventId == ids[0] and head.Status == DeliveryStatus.FAILED and head.Attempts == attempts
        assert 8 <= attempts <= 11
        assert all(d.Attempts == 0 and d.Status == DeliveryStatus.PENDING for d in rest)
        assert head.LastStatusCode is None and "ConnectionRefused" in head.LastResponse
        assert access.get_endpoint(endpoint.EndpointId).FailingSince is not None

        receiver.start()  # up again, on the same port
        clock.shift(timedelta(hours=11))  # past the next attempt (10 h, +10% jitter at most)
        sender.run_pass()

    assert receiver.ids() == ids  # oldest first, each once
    assert [d.Status for d in deliveries(endpoint)] == [DeliveryStatus.SUCCEEDED] * 6
    assert access.get_endpoint(endpoint.EndpointId).FailingSince is None


def test_failing_for_three_days_disables_the_endpoint_and_tells_staff(
        db, moto_table, webhook_settings, receiver, django_user_model) -> None:
    django_user_model.objects.create_superuser("boss", "boss@example.com", "x")
    django_user_model.objects.create_user("clerk", "clerk@example.com", "x", is_staff=True)  # no permission
    receiver.status = 500
    start = datetime(2027, 3, 1, 9, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        endpoint = register(receiver)
        first, second = emit("payment.failed", 1), emit("payment.failed", 2)
        sender = batches.Sender()
        disabled = 0
        while access.utc_now() < start + timedelta(days=3, hours=1):
            disabled += sender.run_pass().counts["disabled"]
            clock.shift(timedelta(minutes=30))
        check_disabled_then_enable(endpoint, receiver, disabled, first, second)


def check_disabled_then_enable(endpoint, receiver, disabled, first, second) -> None:
    endpoint = access.get_endpoint(endpoint.EndpointId)
    assert disabled == 1 and endpoint.Status == EndpointStatus.DISABLED and endpoint.DisabledReason == "failing"
    head, waiting = deliveries(endpoint)
    assert head.EventId == first and head.Status == DeliveryStatus.ABANDONED and head.NextAttemptAt is None
    assert 11 <= head.Attempts <= 14 and head.LastStatusCode == 500 and len(head.LastResponse) == 1024
    # The last attempt is due at three days exactly, made by the first pass after (every 30 min here).
    last_gap = datetime.fromisoformat(head.LastAttemptAt) - datetime.fromisoformat(head.FirstAttemptAt)
    assert timedelta(days=3) <= last_gap <= timedelta(days=3, minutes=31)
    assert waiting.EventId == second and waiting.Status == DeliveryStatus.PENDING and waiting.Attempts == 0
    assert [m.to for m in mail.outbox] == [["boss@example.com"]]
    assert "disabled" in mail.outbox[0].subject and endpoint.EndpointId in mail.outbox[0].body
    assert [r.webhook_id for r in receiver.received] == [first] * head.Attempts

    # Enabled again by staff: the waiting event goes; the abandoned one only on a resend.
    receiver.status = 200
    actions.enable_endpoint(endpoint, actor="boss@example.com")
    batches.Sender().run_pass()
    assert receiver.ids() == [second]
    actions.resend_delivery(endpoint, head, actor="boss@example.com")
    batches.Sender().run_pass()
    assert receiver.ids() == [second, first]


def test_secret_rotation_signs_with_both_for_24_hours_then_only_the_new(
        moto_table, webhook_settings, receiver) -> None:
    start = datetime(2027, 3, 1, 9, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        endpoint = register(receiver, name="old")
        receiver.secrets["new"] = actions.rotate_secret(access.get_endpoint(endpoint.EndpointId), actor="staff")
        assert receiver.secrets["new"] != receiver.secrets["old"] and receiver.secrets["new"].startswith("whsec_")
        during = emit("payment.succeeded", 1)
        clock.shift(timedelta(seconds=1))  # the sender reads events made before its own time
        assert batches.Sender().run_pass().counts["succeeded"] == 1
        clock.shift(timedelta(hours=24, seconds=1))
        after = emit("payment.succeeded", 2)
        clock.shift(timedelta(seconds=1))
        batches.Sender().run_pass()
    by_id = {r.webhook_id: r for r in receiver.delivered()}
    assert sorted(by_id[during].verified_by) == ["new", "old"]
    assert len(by_id[during].headers["webhook-signature"].split(" ")) == 2
    assert by_id[after].verified_by == ["new"]
    assert len(by_id[after].headers["webhook-signature"].split(" ")) == 1


def test_send_test_event_and_resend_go_after_what_is_queued(moto_table, webhook_settings, receiver) -> None:
    endpoint = register(receiver)
    first = emit("payment.succeeded", 1)
    batches.Sender().run_pass()
    second = emit("payment.succeeded", 2)
    batches.Sender().fan_out(access.get_endpoint(endpoint.EndpointId))  # queued, not yet sent
    test = actions.send_test_event(access.get_endpoint(endpoint.EndpointId), actor="staff@example.com")
    actions.resend_delivery(endpoint, deliveries(endpoint)[0], actor="staff@example.com")
    third = emit("payment.succeeded", 3)
    batches.Sender().run_pass()
    assert receiver.ids() == [first, second, test.EventId, first, third]
    assert receiver.delivered()[2].body["type"] == "webhook.test"


def test_the_command_does_one_pass_and_prints_json(moto_table, webhook_settings, receiver) -> None:
    register(receiver)
    emit("payment.succeeded")
    out = StringIO()
    call_command("deliver_webhooks", "--once", "--json", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["succeeded"] == 1 and summary["outcome"] == "completed" and summary["endpoints"] == 1


def test_metrics_show_attempts_by_outcome_and_the_oldest_undelivered_age(moto_table, webhook_settings,
                                                                         receiver) -> None:
    from django.test import Client

    from billing.batches.outbound.metrics import WEBHOOKS

    start = datetime(2027, 3, 1, 9, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        register(receiver)
        emit("payment.succeeded", 1)
        clock.shift(timedelta(seconds=1))
        batches.Sender().run_pass()
        receiver.status = 503
        emit("payment.succeeded", 2)
        clock.shift(timedelta(seconds=1))
        batches.Sender().run_pass()
        clock.shift(timedelta(minutes=10))
        emit("payment.succeeded", 3)  # not yet fanned out: the sender is "down"
        WEBHOOKS.forget()
        text = Client().get("/metrics").content.decode()
    assert 'rpay_webhook_deliveries_total{outcome="succeeded"} 1.0' in text
    assert 'rpay_webhook_deliveries_total{outcome="failed"} 1.0' in text
    assert 'rpay_webhook_endpoints{status="enabled"} 1.0' in text
    [age] = [line for line in text.splitlines() if line.startswith("rpay_webhook_oldest_undelivered_age_seconds ")]
    assert 600 <= float(age.split()[1]) < 700  # event 2, failing for 10 minutes


def test_readyz_does_not_depend_on_a_merchants_endpoint(db, moto_table, webhook_settings, receiver) -> None:
    from django.test import Client

    from core.dynamo.table import ensure_table
    from core.ops import health
    from shop.models import ShopItem

    ensure_table(model=ShopItem)

    register(receiver)
    receiver.stop()
    emit("payment.succeeded")
    batches.Sender().run_pass()
    health.forget_readiness()
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content


def test_a_real_change_reaches_the_receiver_as_the_api_shows_it(db, customer, webhook_settings, receiver) -> None:
    from billing.rules.api_objects import subscription_object
    from tests.builders import subscribe

    register(receiver)
    sub = subscribe(customer)  # the access layer writes subscription.created in its transaction
    batches.Sender().run_pass()
    [got] = receiver.delivered()
    assert got.body["type"] == "subscription.created"
    assert got.body["data"] == json.loads(json.dumps(subscription_object(sub, today()), default=str))
    assert got.body["data"]["id"] == sub.sub_id


def test_one_endpoints_trouble_does_not_stop_the_others(moto_table, webhook_settings, receiver, monkeypatch) -> None:
    broken = register(receiver)
    register(receiver)
    event_id = emit("payment.succeeded")
    real = access.queue_page

    def flaky(endpoint, **kwargs):
        if endpoint.EndpointId == broken.EndpointId:
            raise RuntimeError("DynamoDB is having a bad day")
        return real(endpoint, **kwargs)

    monkeypatch.setattr(access, "queue_page", flaky)
    out = StringIO()
    with pytest.raises(CommandError, match="1 endpoint"):
        call_command("deliver_webhooks", "--once", "--json", stdout=out)
    [line] = out.getvalue().splitlines()
    assert json.loads(line)["errors"] == 1 and json.loads(line)["succeeded"] == 1
    assert receiver.ids() == [event_id]
