"""One payment, path by path (billing/operations/payments.py and the batch writes): the gateway
retry loop, what a receipt and a decline record and mail, the guards and lost races, a
declined period's retries with their own keys, and recording a charge the gateway made
(reconciliation's path)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.conf import settings as conf
from django.core import mail

from billing import access
from billing.models import MerchantEventType, Subscription, SubscriptionStatus
from billing.operations import payments
from billing.operations.expiry import expire
from billing.operations.outcomes import PaymentStatus
from core import money
from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD, SimulatedGateway
from tests.builders import (
    DECLINED_NUMBER,
    card,
    fresh,
    make_account,
    make_subscription,
    receipts_of,
    seed_due,
)

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


class FlakyGateway:
    """The simulated gateway behind a connection that fails the first ``failures`` calls."""

    def __init__(self, failures: int) -> None:
        self.real = get_gateway()
        self.failures = failures
        self.calls = 0

    def charge(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise GatewayError(f"timeout {self.calls}")
        return self.real.charge(*args, **kwargs)


def charge_for(sub, *, start: date, end: date, **extra: str):
    """A charge the gateway really made for ``start``..``end``, as reconciliation finds it."""
    metadata = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU,
                "period_start": start.isoformat(), "period_end": end.isoformat(), **extra}
    return get_gateway().charge(sub.PaymentDetails.Token, 999, "USD", f"{sub.sub_id}:{start}", metadata)


class NoDeclineCode:
    """The simulated gateway, but its declines come back without a code (some processors
    send none)."""

    def charge(self, *args, **kwargs):
        return dataclasses.replace(get_gateway().charge(*args, **kwargs), decline_code=None)


def events_of(sub, action: str) -> list:
    return [e for e in access.get_events_by_account(sub.account_id) if e.Action == action]


def test_an_unreachable_gateway_is_tried_three_times_with_growing_pauses(moto_table, sleeps) -> None:
    [sub] = seed_due(1, due=D)
    gateway = FlakyGateway(failures=2)
    out = payments.take_payment(sub, run_date=D, gateway=gateway)
    assert out.status == PaymentStatus.PAID
    assert gateway.calls == 3
    assert sleeps == [0.2, 0.4]
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1


def test_a_gateway_down_for_three_calls_raises_and_records_nothing(moto_table, sleeps) -> None:
    [sub] = seed_due(1, due=D)
    gateway = FlakyGateway(failures=3)
    with pytest.raises(GatewayError, match="timeout 3"):
        payments.take_payment(sub, run_date=D, gateway=gateway)
    assert gateway.calls == 3 and sleeps == [0.2, 0.4]
    assert receipts_of(sub) == [] and fresh(sub).NextPaymentDate == D.isoformat()


def test_the_receipt_keeps_the_charge_id_and_the_mail_shows_it(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D)
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    assert out.charge_id and receipt.ChargeId == out.charge_id == charge["charge_id"]
    [message] = mail.outbox
    product = sub.ProductName or sub.SKU
    assert message.subject == f"Invoice {receipt.Number}: {product}, 15 March 2027"  # the number
    assert f"Receipt:      {receipt.Number}" in message.body
    assert f"Reference:    {out.charge_id}" in message.body
    assert "Billing date: 15 March 2027" in message.body
    assert "Pays for:     15 March 2027 to 14 April 2027" in message.body
    assert "next payment is due on 15 April 2027" in message.body


def test_the_decline_mail_names_the_period_amount_and_retry_date(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    out = payments.take_payment(sub, run_date=D)
    assert out.status == PaymentStatus.DECLINED and out.next_payment == date(2027, 3, 16)
    [message] = mail.outbox
    product = sub.ProductName or sub.SKU
    assert message.subject == f"Payment declined: {product}"
    assert "(billing date\n15 March 2027)" in message.body
    assert "We will try again on 16 March 2027." in message.body
    assert money.format_with_symbol(out.amount, sub.Currency) in message.body


def test_a_subscription_no_longer_live_is_skipped_even_with_a_date(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    sub.Status = SubscriptionStatus.CANCELLED  # the object in hand still has its date
    out = payments.take_payment(sub, run_date=D)
    assert out.status == PaymentStatus.SKIPPED and out.reason == "not live"
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []


def test_a_live_subscription_without_a_date_is_skipped(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    sub.NextPaymentDate = None
    out = payments.take_payment(sub, run_date=D)
    assert out.status == PaymentStatus.SKIPPED and out.reason == "not live"


def test_a_run_that_lost_the_race_to_advance_says_so(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    mine, theirs = fresh(sub), fresh(sub)  # each run's own read of the item
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == PaymentStatus.PAID
    assert second.status == PaymentStatus.SKIPPED
    assert second.reason == "already advanced by another run"
    assert second.charge_id == first.charge_id and len(receipts_of(sub)) == 1
    assert len(mail.outbox) == 1


def test_a_run_that_lost_the_race_to_mark_past_due_says_so(moto_table) -> None:
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == PaymentStatus.DECLINED
    assert second.status == PaymentStatus.SKIPPED
    assert second.reason == "already handled by another run"
    assert len(mail.outbox) == 1


def test_a_first_payment_declined_twice_is_ended_once(moto_table) -> None:
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D, end_on_decline=True)
    second = payments.take_payment(mine, run_date=D, end_on_decline=True)
    assert first.status == PaymentStatus.CANCELLED
    assert second.status == PaymentStatus.SKIPPED
    assert second.reason.endswith("; already handled by another run")
    assert fresh(stale).Status == SubscriptionStatus.CANCELLED


def test_no_retry_left_cancels_once_and_a_stale_run_says_so(moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = []
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == PaymentStatus.CANCELLED and first.reason.endswith("; no retry left")
    assert second.status == PaymentStatus.SKIPPED
    assert second.reason == "already cancelled or changed by another run"
    [message] = mail.outbox
    assert message.subject == f"Subscription cancelled: {stale.ProductName or stale.SKU}"


def test_a_declined_period_is_retried_with_its_own_key_and_metadata_until_no_retry_is_left(
        moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [2, 5]
    settings.REMINDER_DAYS_BEFORE = 7
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    charged_with = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "billing_date": "2027-03-15",
                    "period_start": "2027-03-15", "period_end": "2027-04-14", "payment_day": "15",
                    "price": str(sub.PaymentAmount),  # the monthly price it was charged at
                    # its tax: the settings' seller is Irish, and a subscription without a billing
                    # country is taxed at the seller's home rate (23%, included: 999 = 812 + 187)
                    "net": "812", "tax": "187", "tax_rate": "23", "tax_country": "IE", "tax_treatment": "domestic",
                    "prices_include_tax": "1"}

    first = payments.take_payment(fresh(sub), run_date=D)
    assert (first.status, first.attempt, first.reason) == (PaymentStatus.DECLINED, 0,
                                                           "card_declined; retry on 2027-03-17")
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount) == (SubscriptionStatus.PAST_DUE, "2027-03-15", 0)
    # retried 2 days on; reminded of the next anchor date (15 Apr) 7 days before it
    assert (after.NextPaymentDate, after.NextReminderDate) == ("2027-03-17", "2027-04-08")

    second = payments.take_payment(after, run_date=date(2027, 3, 17))
    assert (second.status, second.attempt, second.next_payment) == (PaymentStatus.DECLINED, 1,
                                                                     date(2027, 3, 20))  # the gap 5 - 2
    assert (second.period, second.period_end) == (D, date(2027, 4, 14))  # still the owed period
    assert fresh(sub).RetryCount == 1

    third = payments.take_payment(fresh(sub), run_date=date(2027, 3, 20))
    assert (third.status, third.attempt, third.reason) == (PaymentStatus.CANCELLED, 2,
                                                           "card_declined; no retry left")
    assert fresh(sub).Status == SubscriptionStatus.CANCELLED

    charges = sorted(get_gateway().charges_made(sub_id=sub.sub_id), key=lambda c: c["metadata"]["attempt"])
    assert [c["idempotency_key"] for c in charges] == [
        f"{sub.sub_id}:2027-03-15", f"{sub.sub_id}:2027-03-15:retry1", f"{sub.sub_id}:2027-03-15:retry2"]
    assert [c["metadata"] for c in charges] == [{**charged_with, "attempt": str(n)} for n in range(3)]
    assert all(c["amount"] == 999 and c["currency"] == "USD" for c in charges)
    declined = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.declined"]
    assert len(declined) == 2 and {(e.Actor, e.Note) for e in declined} == {("batch", "card_declined")}
    assert [m.subject.split(":")[0] for m in mail.outbox] == [
        "Payment declined", "Payment declined", "Subscription cancelled"]


def test_charge_keys_name_the_period_and_the_retry() -> None:
    assert payments.charge_key("s1", D, 0) == "s1:2027-03-15"
    assert payments.charge_key("s1", D, 1) == "s1:2027-03-15:retry1"


def test_a_staff_retry_is_charged_before_its_date_and_by_its_actor(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    payments.take_payment(sub, run_date=D)
    out = payments.take_payment(fresh(sub), run_date=D, actor="staff:ann")  # the retry is due on the 16th
    assert out.status == PaymentStatus.DECLINED and out.attempt == 1
    # both events fall in the same second: tell them apart by actor, not by key order
    declined = [e.Actor for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.declined"]
    assert sorted(declined) == ["batch", "staff:ann"]


def test_an_active_subscription_is_not_charged_before_its_date(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=date(2027, 3, 14))
    assert (out.status, out.reason, out.due) == (PaymentStatus.SKIPPED, "not due until 2027-03-15", D)
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []


def test_a_dry_run_says_what_it_would_charge_and_charges_nothing(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D, dry_run=True)
    assert (out.status, out.reason, out.amount) == (PaymentStatus.DRY_RUN, "would charge 9.99 USD", 999)
    assert (out.period, out.period_end) == (D, date(2027, 4, 14))
    assert get_gateway().charges_made(sub_id=sub.sub_id) == [] and fresh(sub).NextPaymentDate == D.isoformat()


def test_a_charge_recorded_after_cancel_extends_the_service_once(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=date(2027, 4, 14), attempt="0")
    access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
    first = payments.record_paid_charge(fresh(sub), result, run_date=D)
    assert (first.status, first.reason) == (PaymentStatus.PAID, "paid after cancel: service runs to 2027-04-14")
    after = fresh(sub)
    assert (after.Status, after.PaidThroughDate, after.LastPaymentDate) == (
        SubscriptionStatus.CANCELLED, "2027-04-14", "2027-03-15")
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.succeeded_after_cancel"]
    assert event.Actor == "batch" and event.After["PaidThroughDate"] == "2027-04-14"
    again = payments.record_paid_charge(fresh(sub), result, run_date=D)
    assert (again.status, again.reason) == (PaymentStatus.SKIPPED, "already recorded")
    assert len(receipts_of(sub)) == 1 and len(mail.outbox) == 1


def test_a_charge_of_a_past_due_period_is_recorded_on_its_retry_date(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    payments.take_payment(sub, run_date=D)  # declined: retried on the 16th
    result = charge_for(fresh(sub), start=D, end=date(2027, 4, 14))  # no attempt in its metadata
    out = payments.record_paid_charge(fresh(sub), result, run_date=date(2027, 3, 16))
    assert (out.status, out.due, out.attempt, out.next_payment) == (
        PaymentStatus.PAID, date(2027, 3, 16), 0, date(2027, 4, 15))
    after = fresh(sub)
    assert (after.Status, after.NextPaymentDate, after.PaidThroughDate, after.RetryCount, after.BillingPeriod) == (
        SubscriptionStatus.ACTIVE, "2027-04-15", "2027-04-14", 0, None)
    assert after.NextReminderDate == "2027-04-08"


def test_a_charge_returned_without_its_period_is_recorded_for_the_period_owed(moto_table) -> None:
    # an older ledger entry replayed by its key: no metadata came back with it

    class NoMetadata:
        def charge(self, *args, **kwargs):
            return dataclasses.replace(get_gateway().charge(*args, **kwargs), metadata={})

    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D, gateway=NoMetadata())
    assert (out.status, out.period, out.period_end, out.next_payment) == (
        PaymentStatus.PAID, D, date(2027, 4, 14), date(2027, 4, 15))
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd) == ("2027-03-15", "2027-04-14")


def test_a_declined_first_payment_ends_the_subscription_with_its_reason(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.Email.set("new@example.com")])  # a newer version
    out = payments.take_first_payment(stale, today=D, actor="pat@example.com")
    assert (out.status, out.reason) == (PaymentStatus.CANCELLED, "card_declined")
    after = fresh(sub)
    assert (after.Status, after.CancelReason) == (SubscriptionStatus.CANCELLED, "first_payment_declined")


def test_a_decline_is_audited_and_mailed_with_the_amount_tried(moto_table) -> None:
    # Paying day 20 from the 15th: the period runs to 19 April, so the amount tried is
    # more than the monthly price the subscription's own context would show.
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER, payment_day=20)
    out = payments.take_payment(sub, run_date=D, actor="staff:ann")
    assert out.status == PaymentStatus.DECLINED and out.amount > sub.PaymentAmount
    [event] = events_of(sub, "payment.declined")
    assert (event.Actor, event.Subject, event.Note) == ("staff:ann", sub.SK, "card_declined")
    assert (event.Before["Status"], event.Before["RetryCount"]) == ("active", 0)
    assert (event.After["Status"], event.After["BillingPeriod"]) == ("past_due", "2027-03-15")
    assert (event.After["Amount"], event.After["Product"]) == (out.amount, sub.ProductName)
    [message] = mail.outbox
    assert money.format_with_symbol(out.amount, "USD") in message.body
    assert money.format_with_symbol(sub.PaymentAmount, "USD") not in message.body


def test_marking_past_due_by_hand_defaults_to_the_batch_and_a_plain_decline(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    access.mark_past_due(fresh(sub), slot=D, period=D, failed_retries=0, retry_on=date(2027, 3, 16),
                         next_reminder=date(2027, 4, 8))
    [event] = events_of(sub, "payment.declined")
    assert (event.Actor, event.Note, event.After["Amount"]) == ("batch", "declined", None)


def test_a_decline_without_a_code_is_called_declined(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    out = payments.take_payment(sub, run_date=D, gateway=NoDeclineCode())
    assert out.reason == "declined; retry on 2027-03-16"
    [first] = seed_due(1, due=D, number=DECLINED_NUMBER, prefix="f")
    ended = payments.take_payment(first, run_date=D, gateway=NoDeclineCode(), end_on_decline=True)
    assert (ended.status, ended.reason) == (PaymentStatus.CANCELLED, "declined")


def test_the_batch_writes_ignore_a_newer_version_from_an_unrelated_change(moto_table, settings) -> None:
    # A change that leaves the dates alone (the customer's new e-mail) lands between the
    # run's read and its write: the decline, the reminder claim and the last decline's
    # cancel still go through. Only the date is the race the runs must win.
    def bump(sub) -> None:
        access.update_subscription(fresh(sub), [Subscription.Email.set("new@example.com")])

    [declining] = seed_due(1, due=D, number=DECLINED_NUMBER)
    stale = fresh(declining)
    bump(declining)
    assert payments.take_payment(stale, run_date=D).status == PaymentStatus.DECLINED
    assert fresh(declining).Status == SubscriptionStatus.PAST_DUE

    [paying] = seed_due(1, due=D, prefix="p")
    stale = fresh(paying)
    bump(paying)
    assert payments.take_payment(stale, run_date=D).status == PaymentStatus.PAID
    assert fresh(paying).NextPaymentDate == "2027-04-15"

    [reminded] = seed_due(1, due=D, prefix="r")
    stale = fresh(reminded)
    bump(reminded)
    day = date.fromisoformat(stale.NextReminderDate)
    access.claim_reminder(stale, day=day, next_reminder=date(2027, 4, 8))
    assert fresh(reminded).LastReminderDate == day.isoformat()

    settings.PAYMENT_RETRY_DAYS = []
    [last] = seed_due(1, due=D, number=DECLINED_NUMBER, prefix="l")
    stale = fresh(last)
    bump(last)
    out = payments.take_payment(stale, run_date=D, actor="staff:ann")
    assert out.status == PaymentStatus.CANCELLED
    after = fresh(last)
    assert (after.Status, after.CancelReason) == (SubscriptionStatus.CANCELLED, "payment_failed")
    [event] = [e for e in access.get_events_by_account(last.account_id) if e.Action.endswith("cancel")
               or "cancel" in e.Action]
    assert event.Actor == "staff:ann"


def test_a_first_payment_declined_is_ended_by_its_actor_and_a_second_run_says_why(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(sub), fresh(sub)
    payments.take_first_payment(theirs, today=D, actor="pat@example.com")
    [event] = [e for e in access.get_events_by_account(sub.account_id) if "cancel" in e.Action]
    assert event.Actor == "pat@example.com"
    second = payments.take_first_payment(mine, today=D, actor="pat@example.com")
    assert second.reason == "card_declined; already handled by another run"


def test_the_paid_after_cancel_write_is_audited_and_ignores_an_unrelated_change(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.Email.set("new@example.com")])
    access.extend_after_cancel(stale, paid_period=D, paid_through=date(2027, 4, 14))
    assert fresh(sub).PaidThroughDate == "2027-04-14"
    [event] = events_of(sub, "payment.succeeded_after_cancel")
    assert event.Subject == sub.SK
    assert (event.Before["PaidThroughDate"], event.After["PaidThroughDate"]) == ("2027-03-14", "2027-04-14")
    with pytest.raises(access.ConditionFailed, match=sub.SK):  # the refusal names the item
        access.extend_after_cancel(fresh(sub), paid_period=D, paid_through=date(2027, 4, 14))


def test_recording_a_charge_returns_what_the_gateway_charged(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=date(2027, 4, 14), attempt="2")
    out = payments.record_paid_charge(fresh(sub), result, run_date=D)
    assert (out.sub_id, out.account_id, out.charge_id, out.amount, out.attempt) == (
        sub.sub_id, sub.account_id, result.charge_id, 999, 2)
    assert (out.status, out.period, out.period_end) == (PaymentStatus.PAID, D, date(2027, 4, 14))
    [event] = events_of(sub, "payment.succeeded")
    assert event.Actor == "batch"  # the default: reconciliation and the batch record as the batch


def test_an_old_charge_recorded_again_never_moves_a_subscription_back(moto_table) -> None:
    # Paid for March and April; March's charge found again (reconciliation) is
    # recorded for its own first day, which the subscription has left: nothing moves.
    [sub] = seed_due(1, due=D)
    payments.take_payment(sub, run_date=D)
    payments.take_payment(fresh(sub), run_date=date(2027, 4, 15))
    [march, _april] = sorted(get_gateway().list_charges(date(2000, 1, 1), date(2100, 1, 1), sub_id=sub.sub_id),
                             key=lambda c: c.metadata["period_start"])
    out = payments.record_paid_charge(fresh(sub), march, run_date=date(2027, 4, 20))
    assert (out.status, out.reason, out.due) == (PaymentStatus.SKIPPED, "already advanced by another run", D)
    after = fresh(sub)
    assert (after.NextPaymentDate, after.PaidThroughDate) == ("2027-05-15", "2027-05-14")


def test_a_lost_race_reads_the_subscription_back_with_one_get(moto_table, ddb_requests) -> None:
    [sub] = seed_due(1, due=D)
    mine, theirs = fresh(sub), fresh(sub)
    payments.take_payment(theirs, run_date=D)
    ddb_requests.ops.clear()
    payments.take_payment(mine, run_date=D)
    ops = ddb_requests.by_name()
    assert ops["GetItem"] >= 1 and ops["Query"] == 0  # the SKU is known: GetItem, not a Query


def test_declines_and_the_last_ones_cancel_are_mailed_in_the_customers_language(moto_table, settings) -> None:
    from django.utils import translation

    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER, language="it")
    payments.take_payment(sub, run_date=D)
    settings.PAYMENT_RETRY_DAYS = []
    [last] = seed_due(1, due=D, number=DECLINED_NUMBER, prefix="l", language="it")
    payments.take_payment(last, run_date=D)
    with translation.override("it"):
        declined = translation.gettext("Payment declined: {product}").format(product=sub.ProductName)
        cancelled = translation.gettext("Subscription cancelled: {product}").format(product=last.ProductName)
    assert declined != f"Payment declined: {sub.ProductName}"
    assert [m.subject for m in mail.outbox] == [declined, cancelled]


def test_a_first_payment_is_the_customers_and_goes_through_the_gateway_given(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    assert payments.take_first_payment(sub, today=D).status == PaymentStatus.PAID
    [event] = events_of(sub, "payment.succeeded")
    assert event.Actor == "customer"  # the default: the customer subscribing
    [declining] = seed_due(1, due=D, number=DECLINED_NUMBER, prefix="d")
    out = payments.take_first_payment(declining, today=D, gateway=NoDeclineCode())
    assert out.reason == "declined"  # the gateway given, whose declines carry no code


def test_a_replayed_charge_is_recorded_for_the_period_it_first_paid(moto_table) -> None:
    # A run charged 15 March-14 April and died before the receipt; the customer then moved
    # the payment day to the 20th, so the period owed now runs to 19 April. The re-run's
    # key replays the first charge: receipt and service follow what was charged.
    from billing.actions import subscriptions as actions

    [sub] = seed_due(1, due=D)
    first = charge_for(sub, start=D, end=date(2027, 4, 14), attempt="0")
    actions.change_payment_day(fresh(sub), 20, actor="customer")
    assert payments.owed_period(fresh(sub)) == (D, date(2027, 4, 19))
    out = payments.take_payment(fresh(sub), run_date=D)
    assert (out.status, out.charge_id, out.period_end) == (PaymentStatus.PAID, first.charge_id, date(2027, 4, 14))
    assert (out.sub_id, out.account_id) == (sub.sub_id, sub.account_id)
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd, receipt.ProcessedAmount) == ("2027-03-15", "2027-04-14", 999)
    after = fresh(sub)
    assert (after.PaidThroughDate, after.NextPaymentDate) == ("2027-04-14", "2027-04-15")


def test_the_receipt_mail_shows_the_amount_charged_and_links_the_receipt(moto_table) -> None:
    [sub] = seed_due(1, due=D, payment_day=20)  # 15 March to 19 April: more than the monthly price
    out = payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    [message] = mail.outbox
    assert out.amount > sub.PaymentAmount
    assert money.format_with_symbol(out.amount, "USD") in message.body
    assert money.format_with_symbol(sub.PaymentAmount, "USD") not in message.body
    assert f"/receipts/{receipt.Number}/" in message.body


def test_an_advance_without_its_last_day_is_paid_through_the_day_before_the_next_payment(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    access.advance_after_payment(fresh(sub), slot=D, paid_period=D, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8))
    assert fresh(sub).PaidThroughDate == "2027-04-14"


def test_a_charge_recorded_without_an_attempt_is_the_first(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=date(2027, 4, 14))
    bare = dataclasses.replace(result, metadata={k: v for k, v in result.metadata.items() if k != "attempt"})
    assert payments.record_paid_charge(fresh(sub), bare, run_date=D).attempt == 0


def test_the_receipt_mail_is_in_the_customers_language(moto_table) -> None:
    from django.utils import translation

    [sub] = seed_due(1, due=D, language="it")
    payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    with translation.override("it"):
        subject = str(payments.receipt_subject(receipt))
    [message] = mail.outbox
    assert message.subject == subject and subject.startswith("Fattura")  # a charge's receipt is its invoice


def failed_events(sub) -> list[dict]:
    """The objects of the merchant's ``payment.failed`` events about ``sub``, in order."""
    events, _ = access.events_after(None, limit=1000)
    return [e.Data for e in events
            if e.Type == MerchantEventType.PAYMENT_FAILED and e.Data["subscription"] == sub.sub_id]


def test_each_decline_tells_the_merchant_the_whole_attempt_and_the_last_one_ends_it(moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [2]
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    payments.take_payment(fresh(sub), run_date=D)  # past due, retried on the 17th
    out = payments.take_payment(fresh(sub), run_date=date(2027, 3, 17))  # the last: no retry left
    assert out.status == PaymentStatus.CANCELLED
    first, last = sorted(get_gateway().charges_made(sub_id=sub.sub_id), key=lambda c: c["metadata"]["attempt"])
    attempt = {"object": "payment", "status": "failed", "customer": sub.account_id, "subscription": sub.sub_id,
               "product": sub.SKU, "amount": 999, "currency": "USD", "period_start": "2027-03-15",
               "period_end": "2027-04-14", "decline_code": "card_declined"}
    # Each names its own charge (the retry's key is its own), and the last one, written with
    # the cancel, no next retry.
    assert failed_events(sub) == [
        {**attempt, "id": first["charge_id"], "charge": first["charge_id"], "attempt": 0, "next_retry": "2027-03-17"},
        {**attempt, "id": last["charge_id"], "charge": last["charge_id"], "attempt": 1, "next_retry": None},
    ]


def test_a_declined_first_payment_tells_the_merchant_even_without_a_decline_code(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    out = payments.take_first_payment(sub, today=D, gateway=NoDeclineCode())
    assert (out.status, fresh(sub).CancelReason) == (PaymentStatus.CANCELLED, "first_payment_declined")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert failed_events(sub) == [{
        "object": "payment", "id": charge["charge_id"], "status": "failed", "customer": sub.account_id,
        "subscription": sub.sub_id, "product": sub.SKU, "amount": 999, "currency": "USD",
        "period_start": "2027-03-15", "period_end": "2027-04-14", "charge": charge["charge_id"],
        "decline_code": "declined", "attempt": 0, "next_retry": None}]


def test_a_receipt_left_by_a_run_that_died_before_its_advance_is_mailed_with_its_own_number(moto_table) -> None:
    # A run charged and wrote the receipt, then died before the advance: the next run's
    # charge replays the key, finds the receipt (not written again, no second number)
    # and, its advance recording the payment, mails the stored receipt.
    [sub] = seed_due(1, due=D)
    charged = charge_for(sub, start=D, end=date(2027, 4, 14), attempt="0")
    stored, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD",
                                            charge_id=charged.charge_id, period_end=date(2027, 4, 14),
                                            retention_days=conf.RECEIPT_RETENTION_DAYS)
    assert created and stored.Number
    out = payments.take_payment(fresh(sub), run_date=D)
    assert (out.status, out.charge_id, out.mail_error) == (PaymentStatus.PAID, charged.charge_id, "")
    assert [r.Number for r in receipts_of(sub)] == [stored.Number]
    [message] = mail.outbox
    assert message.subject == f"Invoice {stored.Number}: {sub.ProductName}, 15 March 2027"
    assert f"Invoice number: {stored.Number}" in message.body  # the invoice it is
    assert f"Receipt:      {stored.Number}" in message.body
    assert f"Your invoice, and its PDF, is at\n{conf.SITE_URL.rstrip('/')}/receipts/{stored.Number}/" in message.body


def test_a_charge_that_lands_after_the_account_was_closed_is_refunded_whole_and_not_mailed(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    read_by_the_run = fresh(sub)
    access.cancel_subscription(fresh(sub), reason=access.ACCOUNT_CLOSED_REASON, actor="customer")
    out = payments.take_payment(read_by_the_run, run_date=D)  # its charge lands after the close
    assert (out.status, out.reason) == (PaymentStatus.SKIPPED, "refunded: the account was closed")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [refund] = get_gateway().refunds_made()
    assert (refund["charge_id"], refund["amount"]) == (charge["charge_id"], 999)
    [receipt] = receipts_of(sub)
    assert receipt.RefundedAmount == 999 and receipt.TTL.year >= D.year + 5  # kept to the tax retention
    assert not [m for m in mail.outbox if m.subject.startswith("Invoice")]
    assert fresh(sub).PaidThroughDate == "2027-03-14"  # nothing served after the close


def test_a_charge_of_a_subscription_that_expired_unconfirmed_is_left_to_the_refund(moto_table) -> None:
    # The customer confirmed the first charge on the bank's page as the subscription
    # expired: reconciliation finds a charge of a subscription that never started.
    sub = make_subscription(make_account(), today=D, card=card(AUTHENTICATING_TEST_CARD))
    waiting = payments.take_first_payment(sub, today=D)
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE
    paid = get_gateway().authenticate(waiting.charge_id, approve=True)
    assert expire(fresh(sub), actor="batch")
    out = payments.record_paid_charge(fresh(sub), paid, run_date=D)
    assert (out.status, out.reason) == (PaymentStatus.SKIPPED,
                                        "the subscription expired before its first payment was confirmed")
    assert (out.period, out.period_end, out.due, out.charge_id, out.amount) == (
        D, date(2027, 4, 14), D, paid.charge_id, paid.amount)
    assert receipts_of(sub) == [] and fresh(sub).Status == SubscriptionStatus.INCOMPLETE_EXPIRED


def test_a_first_payment_made_by_the_next_days_run_waits_for_the_customers_bank(moto_table) -> None:
    # The subscribe page died before the first charge; the next day's run makes it, as the
    # page would have (the first period, the day it was made on): the bank's confirmation
    # leaves it incomplete, not past due.
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        sub = make_subscription(make_account(), today=D, card=card(AUTHENTICATING_TEST_CARD))
    with time_machine.travel(datetime(2027, 3, 16, 9, tzinfo=UTC), tick=False):
        out = payments.take_payment(fresh(sub), run_date=date(2027, 3, 16))
    assert (out.status, out.reason) == (PaymentStatus.ACTION_REQUIRED, "authentication_required")
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE


def test_the_first_charge_is_made_on_session_and_renewals_off_session(moto_table, monkeypatch) -> None:
    # The first charge is the customer's, on the subscribe page (the bank may ask them to
    # confirm it); a renewal is the merchant's, off-session, on the card saved for it. The
    # processor is told which each time (Stripe's off_session), never left to its default.
    sessions: list[object] = []
    unreachable = [0]  # the gateway's next answers that never come
    real_charge = SimulatedGateway.charge

    def charge(self, *args, **kwargs):
        sessions.append(kwargs.get("off_session", "not said"))
        if unreachable[0]:
            unreachable[0] -= 1
            raise GatewayError("no answer")
        return real_charge(self, *args, **kwargs)

    monkeypatch.setattr(SimulatedGateway, "charge", charge)
    with time_machine.travel(datetime(2027, 3, 15, 10, tzinfo=UTC), tick=False):  # subscribed on the page today
        sub = access.create_subscription(
            make_account("pat@example.com"), sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
            card=card(), today=D, reminder_days_before=7, product_name="Daily News")
        assert payments.take_first_payment(sub, today=D).status == PaymentStatus.PAID
    assert payments.take_payment(fresh(sub), run_date=date(2027, 4, 15)).status == PaymentStatus.PAID
    assert sessions == [False, True]
    # Tried again when the gateway did not answer: the last attempt is off-session too.
    sessions.clear()
    unreachable[0] = payments.GATEWAY_ATTEMPTS - 1
    assert payments.take_payment(fresh(sub), run_date=date(2027, 5, 15)).status == PaymentStatus.PAID
    assert sessions == [True] * payments.GATEWAY_ATTEMPTS
