"""``/webhooks/stripe/``: deliveries signed by the test in Stripe's format (valid,
tampered, stale, unsigned, malformed, replayed, unknown, 60 KB) and by localstripe
itself (a real delivery of ``payment_intent.succeeded``); a lost receipt recorded from
``payment_intent.succeeded``, a refund made at the processor recorded from
``charge.refunded``; a failure answered 500 and handled again on redelivery."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.request
from datetime import UTC, datetime

import pytest
from django.core import mail

from billing import access, batches
from billing.models import WebhookEvent
from billing.operations.refunds import refund_receipt
from devtools.localstripe import TEST_WEBHOOK_SECRET
from tests.builders import receipts_of
from tests.stripe_server import saved_card_token
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

SECRET = TEST_WEBHOOK_SECRET  # the one the stripe_gateway fixture sets (localstripe's, for its deliveries)
TODAY = per_test(__name__, "TODAY", lambda now: now.date())


@pytest.fixture(autouse=True)
def webhook_secret(settings) -> None:
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def signature(body: bytes, *, secret: str = SECRET, at: int | None = None) -> str:
    at = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def deliver(client, event: dict | bytes, *, sign: str | None = None, **kwargs):
    body = event if isinstance(event, bytes) else json.dumps(event).encode()
    header = sign if sign is not None else signature(body, **kwargs)
    return client.post("/webhooks/stripe/", data=body, content_type="application/json",
                       **({"HTTP_STRIPE_SIGNATURE": header} if header else {}))


# An event's ``created`` is the same on every delivery of it (its item is keyed by it).
CREATED = per_test(__name__, "CREATED", lambda now: int(now.timestamp()))


def event(event_type: str, obj: dict, event_id: str = "evt_1", *, created: int | None = None) -> dict:
    return {"id": event_id, "object": "event", "type": event_type, "created": created or CREATED,
            "data": {"object": obj}}


def stored(event_id: str, created: int | None = None) -> WebhookEvent | None:
    created = created or CREATED
    try:
        return WebhookEvent.get(*access.webhook_key(event_id, datetime.fromtimestamp(created, tz=UTC)))
    except WebhookEvent.DoesNotExist:
        return None


def test_an_unknown_event_is_answered_and_a_replay_changes_nothing(client, moto_table) -> None:
    first = deliver(client, event("customer.created", {"id": "cus_1"}))
    assert first.status_code == 200 and first.json()["status"] == "ignored"
    assert stored("evt_1").Status == "ignored"
    again = deliver(client, event("customer.created", {"id": "cus_1"}))
    assert again.status_code == 200 and again.json()["status"] == "replay"


@pytest.mark.parametrize("case", ["tampered", "stale", "unsigned", "wrong secret", "malformed", "not an event"])
def test_a_delivery_not_from_stripe_is_400_and_writes_nothing(client, moto_table, case) -> None:
    body = json.dumps(event("payment_intent.succeeded", {"id": "pi_1"}, "evt_bad")).encode()
    if case == "tampered":
        response = deliver(client, body.replace(b"pi_1", b"pi_2"), sign=signature(body))
    elif case == "stale":  # a capture replayed ten minutes later
        response = deliver(client, body, at=int(time.time()) - 600)
    elif case == "unsigned":
        response = deliver(client, body, sign="")
    elif case == "wrong secret":
        response = deliver(client, body, secret="whsec_someone_else")
    elif case == "malformed":
        response = deliver(client, b'{"id": "evt_bad", "type": ')
    else:
        response = deliver(client, json.dumps({"hello": "world"}).encode())
    assert response.status_code == 400
    assert stored("evt_bad") is None


def test_a_large_body_is_read_whole(client, moto_table) -> None:
    big = event("customer.updated", {"id": "cus_1", "description": "x" * 60_000}, "evt_big")
    response = deliver(client, big)
    assert response.status_code == 200 and stored("evt_big").Status == "ignored"


def test_without_a_secret_every_delivery_is_refused(client, moto_table, settings) -> None:
    settings.STRIPE_WEBHOOK_SECRET = ""
    assert deliver(client, event("customer.created", {"id": "cus_1"})).status_code == 400


def paid_subscription(stripe_gateway, localstripe, n: int = 1):
    account_id, sub_id = f"acct-w{n}", f"sub-w{n}"
    customer = stripe_gateway.create_customer(account_id, f"{sub_id}@example.com")
    token = saved_card_token(stripe_gateway, localstripe, customer)
    sub = access.due_subscription(account_id, sub_id, due=TODAY, card=access.payment_details_from(token),
                                  email=f"{sub_id}@example.com")
    access.batch_items([sub])
    return sub


def intent_object(stripe_gateway, intent_id: str) -> dict:
    return stripe_gateway.client.v1.payment_intents.retrieve(intent_id).to_dict()


def test_payment_intent_succeeded_records_a_lost_receipt_once(client, moto_table, stripe_gateway, localstripe,
                                                              monkeypatch) -> None:
    sub = paid_subscription(stripe_gateway, localstripe)
    with monkeypatch.context() as mp:
        mp.setattr(access, "create_receipt", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("lost")))
        batches.run_payments(run_date=TODAY, workers=1, reconcile=False)
    assert not receipts_of(sub)
    [created] = stripe_gateway.recorded.creates("/v1/payment_intents")
    intent_id = next(i.id for i in stripe_gateway.client.v1.payment_intents.list({"limit": 10}).auto_paging_iter())
    mail.outbox.clear()
    response = deliver(client, event("payment_intent.succeeded", intent_object(stripe_gateway, intent_id), "evt_pi"))
    assert response.status_code == 200 and response.json()["status"] == "done", response.json()
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == intent_id and len(mail.outbox) == 1  # the receipt e-mail
    payment_events = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.succeeded"]
    assert [e.Actor for e in payment_events] == ["stripe"]
    # the same event again, or another event of the same charge: nothing more
    assert deliver(client, event("payment_intent.succeeded", intent_object(stripe_gateway, intent_id),
                                 "evt_pi")).json()["status"] == "replay"
    assert deliver(client, event("payment_intent.succeeded", intent_object(stripe_gateway, intent_id),
                                 "evt_pi2")).json()["status"] == "done"
    assert len(receipts_of(sub)) == 1 and len(mail.outbox) == 1


def test_a_refund_made_at_stripe_is_recorded_on_its_receipt(client, moto_table, stripe_gateway, localstripe) -> None:
    sub = paid_subscription(stripe_gateway, localstripe, 2)
    batches.run_payments(run_date=TODAY, workers=1)
    [receipt] = receipts_of(sub)
    refund_receipt(receipt, 100, request_id="staff-1", actor="staff@example.com")  # one made through rpay
    # ...and one made in Stripe's dashboard, which rpay learns of only from Stripe:
    outside = stripe_gateway.client.v1.refunds.create({"payment_intent": receipt.ChargeId, "amount": 250})
    mail.outbox.clear()
    charge_object = {"id": "ch_x", "object": "charge", "payment_intent": receipt.ChargeId, "amount_refunded": 350}
    response = deliver(client, event("charge.refunded", charge_object, "evt_refund"))
    assert response.status_code == 200 and outside.id in response.json()["outcome"]
    [after] = receipts_of(sub)
    assert after.RefundedAmount == 350 and {r.RefundId for r in after.Refunds} >= {outside.id}
    assert len(after.Refunds) == 2 and len(mail.outbox) == 1  # the customer is told of the new one only
    assert any(e.Action == "staff.refund" and e.Actor == "stripe" for e in access.get_events_by_account(sub.account_id))
    # delivered again under a new id (Stripe sends one per refund): nothing more
    assert deliver(client, event("charge.refunded", charge_object, "evt_refund2")).status_code == 200
    assert receipts_of(sub)[0].RefundedAmount == 350 and len(mail.outbox) == 1


def test_a_failed_handler_is_500_and_handled_again_on_redelivery(client, moto_table, stripe_gateway,
                                                                 localstripe) -> None:
    sub = paid_subscription(stripe_gateway, localstripe, 3)
    token = sub.PaymentDetails.Token
    # A charge rpay has not recorded yet (the run is still on its way): the refund waits.
    charge = stripe_gateway.charge(token, 999, "USD", f"{sub.sub_id}:{TODAY}", {
        "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "period_start": TODAY.isoformat(),
        "period_end": TODAY.isoformat(), "billing_date": TODAY.isoformat(), "attempt": "0"})
    stripe_gateway.client.v1.refunds.create({"payment_intent": charge.charge_id, "amount": 100})
    refunded = event("charge.refunded", {"id": "ch_y", "payment_intent": charge.charge_id}, "evt_early")
    response = deliver(client, refunded)
    assert response.status_code == 500 and stored("evt_early").Status == "failed"
    assert stored("evt_early").Attempts == 1
    batches.run_payments(run_date=TODAY, workers=1)  # records the charge (the gateway replays its key)
    assert deliver(client, refunded).status_code == 200
    assert stored("evt_early").Status == "done" and receipts_of(sub)[0].RefundedAmount == 100
    assert stored("evt_early").Attempts == 2  # handled twice; a replay of it now counts nothing
    assert deliver(client, refunded).json()["status"] == "replay" and stored("evt_early").Attempts == 2


@pytest.mark.django_db(transaction=True)
def test_localstripe_delivers_payment_intent_succeeded_to_the_site(moto_table, stripe_gateway, localstripe,
                                                                   live_server) -> None:
    """A real delivery: localstripe signs and posts the event to the running site."""
    request = urllib.request.Request(
        f"{localstripe.url}/_config/webhooks/rpay-test", method="POST",
        data=json.dumps({"url": f"{live_server.url}/webhooks/stripe/", "secret": SECRET,
                         "events": ["payment_intent.succeeded"]}).encode())
    urllib.request.urlopen(request, timeout=10)
    sub = paid_subscription(stripe_gateway, localstripe, 4)
    batches.run_payments(run_date=TODAY, workers=1)
    [receipt] = receipts_of(sub)
    deadline = time.monotonic() + 20
    delivered = []
    while time.monotonic() < deadline and not delivered:
        time.sleep(0.3)
        # (earlier tests' events may arrive too: localstripe sends each a second after)
        delivered = [e for e in _all_webhook_events() if e.Type == "payment_intent.succeeded"
                     and receipt.ChargeId in (e.Outcome or "")]
    assert delivered, "localstripe delivered nothing"
    assert delivered[0].Status == "done" and "recorded already" in delivered[0].Outcome
    assert len(receipts_of(sub)) == 1


def _all_webhook_events() -> list[WebhookEvent]:
    from billing.models import BillingItem

    return [item for item in BillingItem.scan() if isinstance(item, WebhookEvent)]  # a test's own small table


def test_without_the_webhook_the_reconciliation_records_a_refund_made_at_stripe(moto_table, stripe_gateway,
                                                                               localstripe) -> None:
    from billing.batches.reconcile import reconcile

    sub = paid_subscription(stripe_gateway, localstripe, 5)
    batches.run_payments(run_date=TODAY, workers=1)
    [receipt] = receipts_of(sub)
    outside = stripe_gateway.client.v1.refunds.create({"payment_intent": receipt.ChargeId, "amount": 400})
    checked, differences = reconcile(TODAY, TODAY, fix=True)
    assert [d.kind for d in differences] == ["refund not recorded"] and differences[0].fixed
    [after] = receipts_of(sub)
    assert after.RefundedAmount == 400 and [r.RefundId for r in after.Refunds] == [outside.id]
    assert reconcile(TODAY, TODAY, fix=True)[1] == []
