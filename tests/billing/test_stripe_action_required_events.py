"""Stripe's events about a renewal waiting for the customer's bank (action required),
against localstripe, with events signed by the test (localstripe sends no
``payment_intent.payment_failed`` after a failed 3-D Secure): a refusal makes the next
retry charge anew; a stale failure delivered after the customer confirmed records the
payment; a success delivered twice after the page recorded it changes nothing."""

from __future__ import annotations

from datetime import date

import pytest

from billing import batches
from billing.actions import subscriptions as actions
from billing.models import SubscriptionStatus
from billing.operations.outcomes import PaymentStatus
from tests.billing.test_stripe_billing import stripe_due
from tests.builders import fresh, receipts_of
from tests.stripe_events import SECRET, deliver, event
from tests.stripe_server import authenticate_payment_in_browser
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

TODAY = per_test(__name__, "TODAY", lambda now: now.date())
SCA_CARD = "4000002760003184"


@pytest.fixture(autouse=True)
def webhook_secret(settings) -> None:
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def waiting_renewal(gateway, localstripe, n: int):
    sub = stripe_due(gateway, localstripe, n, SCA_CARD)
    assert batches.run_payments(run_date=TODAY, workers=1).counts["action_required"] == 1
    waiting = fresh(sub)
    return waiting, waiting.PaymentDetails.AwaitingCharge


def intent_object(gateway, intent_id: str) -> dict:
    return gateway.client.v1.payment_intents.retrieve(intent_id).to_dict()


def test_a_refused_confirmation_is_forgotten_and_the_next_retry_charges_anew(client, moto_table, stripe_gateway,
                                                                             localstripe) -> None:
    sub, intent_id = waiting_renewal(stripe_gateway, localstripe, 41)
    secret = actions.awaited_charge(sub).client_secret
    authenticate_payment_in_browser(localstripe, secret, success=False)
    failed = event("payment_intent.payment_failed", intent_object(stripe_gateway, intent_id), "evt_fail_41")
    answer = deliver(client, failed)
    assert answer.status_code == 200 and "next retry charges anew" in answer.json()["outcome"]
    after = fresh(sub)
    assert after.PaymentDetails.AwaitingCharge is None and after.Status == SubscriptionStatus.PAST_DUE
    assert deliver(client, failed).json()["status"] == "replay"
    retry_day = date.fromisoformat(after.NextPaymentDate)
    summary = batches.run_payments(run_date=retry_day, workers=1)
    # the card still wants its bank: a new PaymentIntent, waiting again, never the refused one
    assert summary.counts["action_required"] == 1
    again = fresh(sub).PaymentDetails.AwaitingCharge
    assert again and again != intent_id
    assert len(stripe_gateway.recorded.creates("/v1/payment_intents")) == 2


def test_a_stale_failure_after_the_customer_confirmed_records_the_payment_once(client, moto_table, stripe_gateway,
                                                                              localstripe) -> None:
    sub, intent_id = waiting_renewal(stripe_gateway, localstripe, 42)
    stale = intent_object(stripe_gateway, intent_id)  # as a failure event would carry it, earlier
    authenticate_payment_in_browser(localstripe, actions.awaited_charge(sub).client_secret)
    answer = deliver(client, event("payment_intent.payment_failed", stale, "evt_stale_42"))
    assert answer.status_code == 200 and "then confirmed" in answer.json()["outcome"]
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == intent_id and fresh(sub).Status == SubscriptionStatus.ACTIVE
    # the success arrives too, twice; and the customer's page comes back late: still one receipt
    succeeded = event("payment_intent.succeeded", intent_object(stripe_gateway, intent_id), "evt_ok_42")
    assert deliver(client, succeeded).json()["status"] == "done"
    assert deliver(client, succeeded).json()["status"] == "replay"
    assert actions.confirm_renewal(fresh(sub), today=TODAY, actor="customer").status == PaymentStatus.SKIPPED
    assert len(receipts_of(sub)) == 1


def test_a_failure_of_a_charge_nobody_waits_for_is_noted_only(client, moto_table, stripe_gateway, localstripe) -> None:
    sub = stripe_due(stripe_gateway, localstripe, 43, "4000000000000341")
    batches.run_payments(run_date=TODAY, workers=1)
    before = fresh(sub)
    [created] = stripe_gateway.recorded.creates("/v1/payment_intents")
    intents = [i for i in stripe_gateway.client.v1.payment_intents.list({"limit": 100}).auto_paging_iter()
               if i.metadata and i.metadata.to_dict().get("sub_id") == sub.sub_id]
    assert created and intents
    answer = deliver(client, event("payment_intent.payment_failed", intents[0].to_dict(), "evt_noted_43"))
    assert answer.status_code == 200 and "dunning has it in hand" in answer.json()["outcome"]
    assert fresh(sub).Version == before.Version
