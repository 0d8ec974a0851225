"""Outbound webhooks on DynamoDB Local, where the conditional writes race for real: a
sender SIGKILLed mid-delivery (a subprocess running the command, killed while the
receiver holds its request) loses its lease, not the delivery; two senders at once make
each attempt once and keep each endpoint's order."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from billing import access, batches
from billing.actions import webhook_endpoints as actions
from billing.models import DeliveryStatus
from tests.billing.webhook_receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def webhook_settings(settings):
    settings.WEBHOOKS_SETTLE_SECONDS = 0
    settings.WEBHOOKS_TIMEOUT_SECONDS = 5
    settings.WEBHOOKS_LEASE_MARGIN_SECONDS = 1
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    return settings


def emit(n: int) -> str:
    event = access.new_merchant_event("payment.succeeded", account_id="acc1", object_type="payment",
                                      object_id=f"p{n}", data={"object": "payment", "id": f"p{n}"})
    event.save()
    return event.EventId


def test_a_sender_killed_mid_delivery_loses_its_lease_not_the_delivery(local_table, webhook_settings) -> None:
    receiver = Receiver(hold=True).start()
    try:
        endpoint, secret = actions.create_endpoint(receiver.url, None, actor="staff")
        receiver.secrets["s"] = secret
        event_id = emit(1)
        env = {**os.environ, "DYNAMODB_TABLE": webhook_settings.DYNAMODB_TABLE,
               "DYNAMODB_ENDPOINT": webhook_settings.DYNAMODB_ENDPOINT, "WEBHOOKS_SETTLE_SECONDS": "0",
               "WEBHOOKS_TIMEOUT_SECONDS": "5", "WEBHOOKS_LEASE_MARGIN_SECONDS": "1",
               "WEBHOOKS_ALLOW_PRIVATE_URLS": "1", "DYNAMODB_MAX_RETRY_ATTEMPTS": "1"}
        sender = subprocess.Popen([sys.executable, "manage.py", "deliver_webhooks", "--once"], cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert receiver.arrived.wait(120), "the sender never posted"
        sender.send_signal(signal.SIGKILL)
        sender.wait(30)
        receiver.hold = False
        receiver.release.set()  # the receiver answers a sender that is gone

        [claimed] = access.delivery_log(endpoint.EndpointId)
        assert claimed.Status == DeliveryStatus.PENDING and claimed.Attempts == 1 and claimed.LeaseUntil
        # While the dead sender's lease runs, no one takes the delivery...
        assert batches.Sender().run_pass().counts["succeeded"] == 0
        time.sleep(6.5)  # ...after it (timeout 5 s + margin 1 s), the next sender sends it again.
        summary = batches.Sender().run_pass()
        assert summary.counts["succeeded"] == 1
        [done] = access.delivery_log(endpoint.EndpointId)
        assert done.Status == DeliveryStatus.SUCCEEDED and done.Attempts == 2 and done.LeaseUntil is None
        # The receiver saw the same webhook-id twice (the first answer never reached the
        # sender): at least once, never lost; the id lets the receiver drop the repeat.
        assert [r.webhook_id for r in receiver.received] == [event_id, event_id]
    finally:
        receiver.release.set()
        receiver.stop()


def test_two_senders_at_once_make_each_attempt_once_in_order(local_table, webhook_settings) -> None:
    receivers = [Receiver().start() for _ in range(2)]
    try:
        endpoints = []
        for receiver in receivers:
            endpoint, receiver.secrets["s"] = actions.create_endpoint(receiver.url, None, actor="staff")
            endpoints.append(endpoint)
        ids = [emit(n) for n in range(40)]
        attempts: list[tuple[str, str, int]] = []
        lock = threading.Lock()

        def seen(delivery, owner) -> None:
            with lock:
                attempts.append((delivery.endpoint_id, delivery.EventId, int(delivery.Attempts)))

        config = batches.SenderConfig.from_settings(workers=2)
        senders = [batches.Sender(config, owner=f"sender-{n}", on_attempt=seen) for n in range(2)]
        go = threading.Barrier(2)

        def run(sender) -> None:
            go.wait()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and sum(len(r.ids()) for r in receivers) < 2 * len(ids):
                sender.run_pass()

        threads = [threading.Thread(target=run, args=(s,)) for s in senders]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for receiver in receivers:
            assert receiver.ids() == ids  # every event, once, oldest first, at each endpoint
        assert not [a for a, n in Counter(attempts).items() if n > 1]  # no attempt made twice
        assert len(attempts) == 2 * len(ids)
        for endpoint in endpoints:
            assert all(d.Status == DeliveryStatus.SUCCEEDED and d.Attempts == 1
                       for d in access.delivery_log(endpoint.EndpointId))
    finally:
        for receiver in receivers:
            receiver.stop()
