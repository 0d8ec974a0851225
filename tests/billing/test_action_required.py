"""A renewal the bank wants the cardholder to confirm (3-D Secure off-session):
past due "action required", an e-mail with the link, reminders on the retry days instead
of new charges, the customer confirming that very charge on the portal (one receipt,
whoever records it), and the cancel after the last retry. On the simulated gateway, whose
"authentication required" card waits off-session until its bank page answers; the same
over Stripe (localstripe) and in Chromium: tests/billing/test_stripe_billing.py,
tests/test_browser_stripe.py."""

from __future__ import annotations

import threading
import time
from datetime import date

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.actions.webhooks import handle_event
from billing.models import AuditAction, MerchantEventType, SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import (
    DECLINED_NUMBER,
    card,
    first_payment_confirmed,
    fresh,
    make_subscription,
    receipts_of,
    seed_due,
)

pytestmark = pytest.mark.django_db(databases=[])

PERIOD = date(2027, 1, 15)


@pytest.fixture(autouse=True)
def retry_days(settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]


def run(day: date):
    return batches.run_payments(run_date=day, workers=1)


def charges(sub) -> list[dict]:
    return get_gateway().charges_made(sub_id=sub.sub_id)


def merchant_events(sub, kind: MerchantEventType) -> list:
    """The merchant's events of ``kind`` about ``sub``'s account, oldest first."""
    events, more = access.events_after(None, limit=1000)
    assert more is None
    return [e for e in events if e.Type == kind and e.AccountId == sub.account_id]


def audited(sub, action: AuditAction) -> list:
    return [e for e in access.get_events_by_account(sub.account_id) if e.Action == action]


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
    # the merchant hears it failed for want of the customer's confirmation, not for the cancel
    [failed] = merchant_events(sub, MerchantEventType.PAYMENT_FAILED)
    assert (failed.Data["charge"], failed.Data["decline_code"], failed.Data["attempt"]) == \
        (waiting["charge_id"], "authentication_required", 3)


def test_confirmed_by_the_customer_it_is_paid_once_whoever_records_it(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    outcome = actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer", bank_answer=True)
    assert outcome.status == PaymentStatus.PAID
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.ACTIVE and after.PaymentDetails.AwaitingCharge is None
    assert (after.PaidThroughDate, after.NextPaymentDate) == ("2027-02-14", "2027-02-15")
    # the webhook arrives too, and a second click: still one receipt
    intent = {"id": waiting["charge_id"], "object": "payment_intent", "status": "succeeded", "amount": waiting["amount"],
              "currency": waiting["currency"].lower(), "metadata": waiting["metadata"], "created": 1800000000}
    assert handle_event({"id": "evt_x", "type": "payment_intent.succeeded", "data": {"object": intent}},
                        today=PERIOD)[0] == "done"
    assert actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer").status == PaymentStatus.SKIPPED
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
    assert outcome.status == PaymentStatus.DECLINED and outcome.next_payment == date(2027, 1, 16)
    assert fresh(sub).PaymentDetails.AwaitingCharge is None
    access.replace_card(fresh(sub), card())  # the customer gives another card
    assert run(date(2027, 1, 16)).counts["paid"] == 1
    assert [c["status"] for c in charges(sub)] == ["declined", "succeeded"]


def test_a_card_replaced_while_waiting_cancels_the_old_charge_and_pays_with_the_new(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    outcome = actions.replace_card(fresh(sub), card(), actor="customer", today=PERIOD)
    assert outcome is not None and outcome.status == PaymentStatus.PAID
    assert get_gateway().charge_status(waiting["charge_id"]).decline_code == "canceled"
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId != waiting["charge_id"]
    assert fresh(sub).PaymentDetails.AwaitingCharge is None


def test_staff_retry_now_while_waiting_changes_nothing(table) -> None:
    sub = awaiting_renewal()
    before = fresh(sub)
    outcome = payments.take_payment(before, run_date=PERIOD, actor="staff")
    assert outcome.status == PaymentStatus.SKIPPED
    assert outcome.reason == "waiting for the customer to confirm the payment with their bank"
    [waiting] = charges(sub)
    assert outcome.charge_id == waiting["charge_id"]  # the charge it asked about
    assert len(charges(sub)) == 1 and fresh(sub).Version == before.Version


def test_a_dry_run_says_it_would_ask(table) -> None:
    sub = awaiting_renewal()
    outcome = payments.take_payment(fresh(sub), run_date=date(2027, 1, 16), dry_run=True)
    assert outcome.status == PaymentStatus.DRY_RUN and "waiting for the customer's bank" in outcome.reason


def test_cancelling_while_waiting_cancels_the_charge(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    actions.cancel(fresh(sub), actor="customer")
    assert get_gateway().charge_status(waiting["charge_id"]).decline_code == "canceled"


def test_on_session_the_simulated_card_is_taken_as_confirmed(table) -> None:
    with time_machine.travel("2027-01-10 12:00Z", tick=False):  # made today: its first charge is on-session
        account = access.create_account("sca@example.com")
        sub = make_subscription(account, card=card(AUTHENTICATING_TEST_CARD))
        assert first_payment_confirmed(sub, date(2027, 1, 10)).status == PaymentStatus.PAID


# --- what the run records, says and e-mails at each turn --------------------------------


def test_asked_on_a_staff_retry_the_customer_is_told_in_their_language_and_the_merchant_hears_it(table) -> None:
    # its payment day moved to the 20th: this period runs to 19 Feb, longer than a month (11.60, not 9.99)
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER, language="it", payment_day=20)
    assert run(PERIOD).counts["declined"] == 1
    access.replace_card(fresh(sub), card(AUTHENTICATING_TEST_CARD))  # the bank's new card, unconfirmed off-session
    mail.outbox.clear()
    outcome = payments.take_payment(fresh(sub), run_date=date(2027, 1, 16), actor="staff")  # "retry now"
    waiting = charges(sub)[-1]
    assert waiting["status"] == "requires_action" and waiting["metadata"]["attempt"] == "1"
    assert (outcome.status, outcome.reason, outcome.next_payment, outcome.charge_id) == (
        PaymentStatus.ACTION_REQUIRED, "authentication_required; waits for the customer, reminded on 2027-01-18",
        date(2027, 1, 18), waiting["charge_id"])
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount, after.NextPaymentDate) == (
        SubscriptionStatus.PAST_DUE, "2027-01-15", 1, "2027-01-18")
    assert after.PaymentDetails.AwaitingCharge == waiting["charge_id"]
    # the reminder of the period after the owed one (20 Feb), 7 days before: the retry moves no schedule
    assert after.NextReminderDate == "2027-02-13"
    [asked] = merchant_events(sub, MerchantEventType.PAYMENT_ACTION_REQUIRED)
    assert asked.Data == {
        "object": "payment", "id": waiting["charge_id"], "status": "action_required", "customer": sub.account_id,
        "subscription": sub.sub_id, "product": sub.SKU, "amount": 1160, "currency": "USD",
        "period_start": "2027-01-15", "period_end": "2027-02-19", "charge": waiting["charge_id"],
        "decline_code": "authentication_required", "attempt": 1, "next_retry": "2027-01-18"}
    [event] = audited(sub, AuditAction.PAYMENT_ACTION_REQUIRED)
    assert (event.Actor, event.Note, event.After["Amount"]) == (
        "staff", f"authentication_required {waiting['charge_id']}", 1160)
    # in Italian, the customer's language, whoever asked
    [message] = mail.outbox
    assert message.subject == "Conferma il tuo pagamento: Daily News"
    body = " ".join(message.body.split())
    # the amount asked, not the monthly price
    assert "15 gennaio 2027" in body and "18 gennaio 2027" in body and "11,60 USD" in body, body
    assert "9,99" not in body
    assert f"/subscriptions/{sub.sub_id}/confirm-payment/" in body


def test_a_card_replaced_while_the_charge_was_asked_leaves_the_subscription_to_the_next_run(table) -> None:
    [sub] = seed_due(1, due=PERIOD, number=AUTHENTICATING_TEST_CARD)
    read = fresh(sub)  # as the run read it
    access.replace_card(fresh(sub), card(), actor="customer")  # meanwhile, on the portal
    outcome = payments.take_payment(read, run_date=PERIOD)
    assert outcome.status == PaymentStatus.SKIPPED
    assert outcome.reason == "already handled by another run, or its card replaced"
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.ACTIVE and after.PaymentDetails.AwaitingCharge is None
    assert not audited(sub, AuditAction.PAYMENT_ACTION_REQUIRED) and mail.outbox == []


def test_refused_at_the_bank_and_never_reported_the_retry_day_charges_anew(table) -> None:
    sub = awaiting_renewal()
    [first] = charges(sub)
    get_gateway().authenticate(first["charge_id"], approve=False)  # the customer closed the page after the bank's
    assert run(date(2027, 1, 16)).counts["action_required"] == 1
    refused, again = charges(sub)
    assert (refused["status"], again["status"], again["metadata"]["attempt"]) == ("declined", "requires_action", "1")
    after = fresh(sub)
    assert after.PaymentDetails.AwaitingCharge == again["charge_id"] and after.RetryCount == 1


def test_refused_and_forgotten_meanwhile_a_run_with_the_old_item_leaves_it_to_the_next(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    read = fresh(sub)  # as the run read it
    actions.confirm_renewal(fresh(sub), today=PERIOD, actor="customer", bank_answer=False)  # forgets the charge
    outcome = payments.take_payment(read, run_date=date(2027, 1, 16))
    assert (outcome.status, outcome.reason, outcome.charge_id) == (
        PaymentStatus.SKIPPED, "changed meanwhile; the next run takes it", waiting["charge_id"])
    assert len(charges(sub)) == 1 and fresh(sub).RetryCount == 0


def run_parts_then_seller_renamed() -> tuple[access.ReceiptNumbers, access.InvoiceSeller]:
    """What a payment run holds from its start: its receipt numbers (a series per worker) and
    the seller as read then. Staff then rename the business: the run's invoices keep the name
    it read."""
    numbers, seller = access.ReceiptNumbers(), access.invoice_seller()
    profile = access.get_seller_profile()
    access.save_seller_profile(
        profile, legal_name="Renamed Ltd", address=profile.Address, country=profile.Country,
        vat_number=profile.VatNumber, oss_registered=bool(profile.OssRegistered),
        under_threshold=bool(profile.UnderThreshold), prices_include_tax=bool(profile.PricesIncludeTax),
        registrations={}, actor="staff")
    return numbers, seller


def paid_from_the_same_series(numbers: access.ReceiptNumbers, day: date):
    """Another subscription paid by the same run's worker first: the receipt number its
    series gave (the next one follows it, without a gap)."""
    [other] = seed_due(1, due=day, prefix="other")
    assert payments.take_payment(other, run_date=day, numbers=numbers).status == PaymentStatus.PAID
    [receipt] = receipts_of(other)
    return receipt.Number


def following(number: str) -> str:
    head, seq = number.rsplit("-", 1)
    return f"{head}-{int(seq) + 1:0{len(seq)}d}"


def test_confirmed_meanwhile_the_run_records_it_with_its_own_numbers_and_seller(table) -> None:
    sub = awaiting_renewal()
    [waiting] = charges(sub)
    numbers, seller = run_parts_then_seller_renamed()
    before = paid_from_the_same_series(numbers, date(2027, 1, 16))
    get_gateway().authenticate(waiting["charge_id"], approve=True)
    outcome = payments.take_payment(fresh(sub), run_date=date(2027, 1, 16), numbers=numbers, seller=seller)
    assert (outcome.status, outcome.charge_id) == (PaymentStatus.PAID, waiting["charge_id"])
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == waiting["charge_id"] and receipt.Number == following(before)
    assert receipt.Seller.Name == seller.name == "rpay Ltd"


def confirm_while_the_answer_is_on_its_way(sub) -> threading.Thread:
    """The cardholder confirms the charge with their bank as soon as it exists: while the
    gateway's answer ("requires action") is still on its way back to the run."""
    gateway = get_gateway()

    def confirm() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if asked := [c for c in gateway.charges_made(sub_id=sub.sub_id) if c["status"] == "requires_action"]:
                gateway.authenticate(asked[0]["charge_id"], approve=True)
                return
            time.sleep(0.002)

    thread = threading.Thread(target=confirm, daemon=True)
    thread.start()
    return thread


def test_confirmed_at_the_last_moment_the_last_retry_records_it_paid(table, settings) -> None:
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)
    for day in (PERIOD, date(2027, 1, 16), date(2027, 1, 18)):
        assert run(day).counts["processed"] == 1
    access.replace_card(fresh(sub), card(AUTHENTICATING_TEST_CARD))
    numbers, seller = run_parts_then_seller_renamed()
    before = paid_from_the_same_series(numbers, date(2027, 1, 20))
    mail.outbox.clear()
    # A slow processor: the answer takes a second to come back (half the round trip), and the
    # customer confirms meanwhile (the thread polls every 2 ms: a second leaves a loaded CI room).
    settings.PAYMENT_GATEWAY_LATENCY_MS = 2000
    customer = confirm_while_the_answer_is_on_its_way(sub)
    outcome = payments.take_payment(fresh(sub), run_date=date(2027, 1, 20), numbers=numbers, seller=seller,
                                   actor="staff")
    customer.join()
    last = charges(sub)[-1]
    assert last["status"] == "succeeded" and last["metadata"]["attempt"] == "3"  # never cancelled
    assert (outcome.status, outcome.next_payment, outcome.charge_id) == (
        PaymentStatus.PAID, date(2027, 2, 15), last["charge_id"])
    [receipt] = receipts_of(sub)
    assert (receipt.ChargeId, receipt.ProcessedAmount, receipt.PeriodStart, receipt.PeriodEnd) == (
        last["charge_id"], 999, "2027-01-15", "2027-02-14")
    assert receipt.Number == following(before) and receipt.Seller.Name == "rpay Ltd"
    after = fresh(sub)
    assert (after.Status, after.PaidThroughDate, after.NextPaymentDate, after.NextReminderDate) == (
        SubscriptionStatus.ACTIVE, "2027-02-14", "2027-02-15", "2027-02-08")
    [paid] = audited(sub, AuditAction.PAYMENT_SUCCEEDED)
    assert paid.Actor == "staff"
    [message] = mail.outbox  # its invoice, and no "subscription cancelled"
    assert message.subject.startswith(f"Invoice {receipt.Number}: ")


# --- a first payment that waits ------------------------------------------------------------


def test_a_first_payment_waiting_names_its_charge_and_amount_and_a_second_click_changes_nothing(table) -> None:
    with time_machine.travel("2027-01-10 12:00Z", tick=False):  # made today: its first charge is on-session
        sub = make_subscription(access.create_account("first@example.com"), card=card(AUTHENTICATING_TEST_CARD))
        read = fresh(sub)  # the page posted twice: the second read it before the first charged
        outcome = payments.take_first_payment(sub, today=date(2027, 1, 10))
        [waiting] = charges(sub)
        assert (outcome.status, outcome.reason, outcome.charge_id) == (
            PaymentStatus.ACTION_REQUIRED, "authentication_required", waiting["charge_id"])
        assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE
        assert fresh(sub).PaymentDetails.AwaitingCharge == waiting["charge_id"]
        [asked] = merchant_events(sub, MerchantEventType.PAYMENT_ACTION_REQUIRED)
        assert (asked.Data["charge"], asked.Data["amount"], asked.Data["period_start"]) == (
            waiting["charge_id"], waiting["amount"], "2027-01-10")
        # the second post: the same charge, nothing written again
        again = payments.take_first_payment(read, today=date(2027, 1, 10))
        assert (again.status, again.reason, again.charge_id) == (
            PaymentStatus.ACTION_REQUIRED, "authentication_required; already incomplete, or paid meanwhile",
            waiting["charge_id"])
        assert len(charges(sub)) == 1 and len(merchant_events(sub, MerchantEventType.PAYMENT_ACTION_REQUIRED)) == 1
