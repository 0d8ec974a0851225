"""A renewal the bank wants the cardholder to confirm (3-D Secure off-session):
past due "action required", an e-mail with the link, reminders on the retry days instead
of new charges, the customer confirming that very charge on the portal (one receipt,
whoever records it), and the cancel after the last retry. On the simulated gateway, whose
"authentication required" card waits off-session until its bank page answers; the same
over Stripe (localstripe) and in Chromium: tests/billing/test_stripe_billing.py,
tests/test_browser_stripe.py."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.actions.webhooks import handle_event
from billing.models import AuditAction, SubscriptionStatus
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import card, first_payment_confirmed, fresh, make_subscription, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

PERIOD = date(2027, 1, 15)


@pytest.fixture(autouse=True)
def retry_days(settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]


def run(day: date):
    return batches.run_payments(run_date=day, workers=1)


def charges(sub) -> list[dict]:
    return get_gateway().charges_made(sub_id=sub.sub_id)


def awaiting_renewal():
    [sub] = seed_due(1, due=PERIOD, number=AUTHENTICATING_TEST_CARD)
    summary = run(PERIOD)
    assert summary.counts["action_required"] == 1 and summary.ok
    assert "action required 1" in summary.line()
    return sub


def test_a_renewal_needing_authentication_waits_for_the_customer(table) -> None:
    sub = awaiting_renewal()
    after = fresh(sub)
    [charge] = charges(sub)
    assert charge["status"] == "requires_action"
    assert after.Status == SubscriptionStatus.PAST_DUE and after.PaymentDetails.AwaitingCharge == charge["charge_id"]
    assert (after.BillingPeriod, after.NextPaymentDate, after.RetryCount) == ("2027-01-15", "2027-01-16", 0)
    assert receipts_of(sub) == []
    [message] = mail.outbox
    assert message.subject.startswith("Please confirm your payment")
    assert f"/subscriptions/{sub.sub_id}/confirm-payment/" in message.body and "Nothing has been charged" in message.body
    events = [e.Action for e in access.get_events_by_account(sub.account_id)]
    assert AuditAction.PAYMENT_ACTION_REQUIRED in events and AuditAction.PAYMENT_DECLINED not in events


def test_the_retry_days_remind_and_never_charge_again_then_cancel(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    for day, retries in ((date(2027, 1, 16), 1), (date(2027, 1, 18), 2), (date(2027, 1, 20), 3)):
        summary = run(day)
        assert summary.counts["retried"] == 1
        assert len(charges(sub)) == 1, "a charge waiting for the customer is never made again"
        if retries < 3:
            after = fresh(sub)
            assert after.RetryCount == retries and after.PaymentDetails.AwaitingCharge == waiting["charge_id"]
            assert "A reminder" in mail.outbox[-1].body
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.CANCELLED and after.CancelReason == "payment_failed"
    assert mail.outbox[-1].subject.startswith("Subscription cancelled")
    # the charge is cancelled at the gateway: an old link can no longer pay it
    assert get_gateway().charge_status(waiting["charge_id"]).decline_code == "canceled"
    assert receipts_of(sub) == []


def test_confirmed_by_the_customer_it_is_paid_once_whoever_records_it(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    outcome = actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer", bank_answer=True)
    assert outcome.status == batches.PaymentStatus.PAID
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.ACTIVE and after.PaymentDetails.AwaitingCharge is None
    assert (after.PaidThroughDate, after.NextPaymentDate) == ("2027-02-14", "2027-02-15")
    # the webhook arrives too, and a second click: still one receipt
    intent = {"id": waiting["charge_id"], "object": "payment_intent", "status": "succeeded", "amount": waiting["amount"],
              "currency": waiting["currency"].lower(), "metadata": waiting["metadata"], "created": 1800000000}
    assert handle_event({"id": "evt_x", "type": "payment_intent.succeeded", "data": {"object": intent}},
                        today=PERIOD)[0] == "done"
    assert actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer").status == batches.PaymentStatus.SKIPPED
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == waiting["charge_id"] and receipt.ProcessedAmount == waiting["amount"]
    assert len(charges(sub)) == 1 and run(date(2027, 1, 16)).counts["processed"] == 0


def test_confirmed_but_never_reported_the_retry_day_records_it(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    get_gateway().authenticate(waiting["charge_id"], approve=True)  # the customer closed the page after the bank's
    summary = run(date(2027, 1, 16))
    assert summary.counts["paid"] == 1
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == waiting["charge_id"] and len(charges(sub)) == 1
    assert fresh(sub).Status == SubscriptionStatus.ACTIVE


def test_refused_by_the_bank_the_next_retry_charges_anew(table) -> None:
    sub = awaiting_renewal()
    outcome = actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer", bank_answer=False)
    assert outcome.status == batches.PaymentStatus.DECLINED and outcome.next_payment == date(2027, 1, 16)
    assert fresh(sub).PaymentDetails.AwaitingCharge is None
    access.replace_card(fresh(sub), card())  # the customer gives another card
    assert run(date(2027, 1, 16)).counts["paid"] == 1
    assert [c["status"] for c in charges(sub)] == ["declined", "succeeded"]


def test_a_card_replaced_while_waiting_cancels_the_old_charge_and_pays_with_the_new(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    outcome = actions.replace_card(fresh(sub), card(), actor="customer", today=PERIOD)
    assert outcome is not None and outcome.status == batches.PaymentStatus.PAID
    assert get_gateway().charge_status(waiting["charge_id"]).decline_code == "canceled"
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId != waiting["charge_id"]
    assert fresh(sub).PaymentDetails.AwaitingCharge is None


def test_staff_retry_now_while_waiting_changes_nothing(table) -> None:
    sub = awaiting_renewal()
    before = fresh(sub)
    outcome = batches.take_payment(before, run_date=PERIOD, actor="staff")
    assert outcome.status == batches.PaymentStatus.SKIPPED and "waiting for the customer" in outcome.reason
    assert len(charges(sub)) == 1 and fresh(sub).Version == before.Version


def test_a_dry_run_says_it_would_ask(table) -> None:
    sub = awaiting_renewal()
    outcome = batches.take_payment(fresh(sub), run_date=date(2027, 1, 16), dry_run=True)
    assert outcome.status == batches.PaymentStatus.DRY_RUN and "waiting for the customer's bank" in outcome.reason


def test_cancelling_while_waiting_cancels_the_charge(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    actions.cancel(fresh(sub), actor="customer")
    assert get_gateway().charge_status(waiting["charge_id"]).decline_code == "canceled"


def test_on_session_the_simulated_card_is_taken_as_confirmed(table) -> None:
    with time_machine.travel("2027-01-10 12:00Z", tick=False):  # made today: its first charge is on-session
        account = access.create_account("sca@example.com")
        sub = make_subscription(account, card=card(AUTHENTICATING_TEST_CARD))
        assert first_payment_confirmed(sub, date(2027, 1, 10)).status == batches.PaymentStatus.PAID
