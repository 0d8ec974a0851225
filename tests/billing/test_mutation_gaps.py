"""Tests written to kill the mutants that survived a mutation run of the money path
(issue 19, docs/MUTATION.md). Each one pins a behaviour that a one-token change to
core/money.py, billing/rules/schedule.py, billing/batches/payments.py, billing/actions/refunds.py,
billing/access/receipts.py or billing/access/batch_writes.py left unnoticed: the gateway
retry loop, the receipt's fields and charge id, the lost-race branches, the retries' keys
and metadata, the refunds' sums and audit, the e-mails' dates, reference and subject,
and the currency exponents."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.access import receipts as receipts_module
from billing.actions import refunds
from billing.batches import payments
from billing.models import Receipt, Subscription, SubscriptionStatus
from billing.rules import schedule
from core import mail as billing_mail
from core import money
from core.payments.errors import GatewayError, RefundRefused
from core.payments.gateway import get_gateway
from tests.builders import DECLINED_NUMBER, fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


# --- money.py: exponents other than 2, empty amounts, the error text -----------------


@pytest.mark.parametrize(("amount", "currency", "minor"), [
    ("1234", "JPY", 1234), ("1.234", "KWD", 1234), ("12.34", "usd", 1234), ("7", "jpy", 7),
])
def test_minor_units_follow_the_currency_exponent(amount, currency, minor):
    assert money.minor_units(Decimal(amount), currency) == minor


def test_minor_units_refuse_more_decimals_than_the_currency_has_and_say_how_many():
    with pytest.raises(ValueError, match=r"^JPY has 0 decimal places at most\.$"):
        money.minor_units(Decimal("12.5"), "jpy")
    with pytest.raises(ValueError, match=r"^KWD has 3 decimal places at most\.$"):
        money.minor_units(Decimal("1.2345"), "kwd")


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (1234, "KWD", "1.234"), (1234, "JPY", "1234"), (-5, "usd", "-0.05"), (0, "EUR", "0.00"),
])
def test_decimal_string_uses_the_exponent(amount, currency, text):
    assert money.decimal_string(amount, currency) == text
    assert money.to_decimal(amount, currency) == Decimal(text)


@pytest.mark.parametrize("empty", [None, ""])
def test_no_amount_formats_as_nothing(empty):
    assert money.format_with_code(empty, "USD") == ""
    assert money.format_with_symbol(empty, "USD") == ""


@pytest.mark.parametrize(("amount", "currency", "with_code", "with_symbol"), [
    (123456, "usd", "1,234.56 USD", "$1,234.56"),
    (-999, "EUR", "-9.99 EUR", "-€9.99"),
    (1234567, "JPY", "1,234,567 JPY", "¥1,234,567"),
    (1234, "kwd", "1.234 KWD", "KWD 1.234"),
    (-123456, "CHF", "-1,234.56 CHF", "-CHF 1,234.56"),
    (5, None, "0.05 ", " 0.05"),
])
def test_formatting_with_code_and_with_symbol(amount, currency, with_code, with_symbol):
    assert money.format_with_code(amount, currency) == with_code
    assert money.format_with_symbol(amount, currency) == with_symbol


def test_unknown_or_missing_currency_has_two_decimals():
    assert money.exponent("xyz") == 2
    assert money.exponent("") == 2
    assert money.exponent(None) == 2  # type: ignore[arg-type]
    assert money.exponent("bhd") == 3


# --- schedule.py: retry days ------------------------------------------------------------


def test_a_retry_day_of_zero_never_charges_on_the_billing_day():
    assert schedule.retry_dates(D, [0, 2, 2, 1]) == [date(2027, 3, 16), date(2027, 3, 17)]
    assert schedule.next_retry_date(D, [0, 3], 0) == date(2027, 3, 18)
    assert schedule.next_retry_date(D, [0, 3], 1) is None
    assert schedule.retry_after(D, [0, 2, 5], 0) == date(2027, 3, 17)


def test_the_first_retry_waits_the_first_retry_day_then_the_gaps():
    assert schedule.retry_after(D, [5, 2], 0) == date(2027, 3, 17)  # 2 days, not the gap 5 - 2
    assert schedule.retry_after(D, [2, 5], 1) == date(2027, 3, 18)
    assert schedule.retry_after(D, [2, 5], 2) is None
    assert schedule.retry_after(D, [3, 3, 4], 1) == date(2027, 3, 16)  # duplicate days: at least one day


def test_a_payment_day_out_of_range_is_refused_with_its_rule():
    with pytest.raises(ValueError, match="^payment day must be 1-31, not 32$"):
        schedule.check_payment_day(32)


def test_an_anchor_date_is_its_own_latest_anchor():
    assert schedule.anchor_on_or_before(15, D) == D
    assert schedule.anchor_on_or_before(15, date(2027, 3, 14)) == date(2027, 2, 15)
    assert schedule.anchor_on_or_before(31, date(2027, 2, 28)) == date(2027, 2, 28)


def test_a_one_day_period_costs_one_days_share_and_an_empty_one_is_refused():
    # 15 Mar .. 14 Apr is a 31-day anchor period: one day of 3100 is 100.
    assert schedule.period_amount(3100, 15, D, D) == 100
    with pytest.raises(ValueError, match="^empty period 2027-03-15..2027-03-14$"):
        schedule.period_amount(3100, 15, D, date(2027, 3, 14))


# --- payments.py: the gateway retry loop ------------------------------------------------


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


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(payments.time, "sleep", slept.append)
    return slept


def test_an_unreachable_gateway_is_tried_three_times_with_growing_pauses(moto_table, sleeps) -> None:
    [sub] = seed_due(1, due=D)
    gateway = FlakyGateway(failures=2)
    out = payments.take_payment(sub, run_date=D, gateway=gateway)
    assert out.status == batches.PaymentStatus.PAID
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


# --- payments.py: what is recorded and mailed --------------------------------------------


def test_the_receipt_keeps_the_charge_id_and_the_mail_shows_it(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D)
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    assert out.charge_id and receipt.ChargeId == out.charge_id == charge["charge_id"]
    [message] = mail.outbox
    product = sub.ProductName or sub.SKU
    assert message.subject == f"Receipt {receipt.Number}: {product}, 15 Mar 2027"  # issue 14: the number
    assert f"Receipt:      {receipt.Number}" in message.body
    assert f"Reference:    {out.charge_id}" in message.body
    assert "Billing date: 15 March 2027" in message.body
    assert "Pays for:     15 March 2027 to 14 April 2027" in message.body
    assert "next payment is due on 15 April 2027" in message.body


def test_the_decline_mail_names_the_period_amount_and_retry_date(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    out = payments.take_payment(sub, run_date=D)
    assert out.status == batches.PaymentStatus.DECLINED and out.next_payment == date(2027, 3, 16)
    [message] = mail.outbox
    product = sub.ProductName or sub.SKU
    assert message.subject == f"Payment declined: {product}"
    assert "(billing date\n15 March 2027)" in message.body
    assert "We will try again on 16 March 2027." in message.body
    assert money.format_with_code(out.amount, sub.Currency) in message.body


# --- payments.py: the guard and the lost races -------------------------------------------


def test_a_subscription_no_longer_live_is_skipped_even_with_a_date(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    sub.Status = SubscriptionStatus.CANCELLED  # the object in hand still has its date
    out = payments.take_payment(sub, run_date=D)
    assert out.status == batches.PaymentStatus.SKIPPED and out.reason == "not live"
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []


def test_a_live_subscription_without_a_date_is_skipped(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    sub.NextPaymentDate = None
    out = payments.take_payment(sub, run_date=D)
    assert out.status == batches.PaymentStatus.SKIPPED and out.reason == "not live"


def test_a_run_that_lost_the_race_to_advance_says_so(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    mine, theirs = fresh(sub), fresh(sub)  # each run's own read of the item
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == batches.PaymentStatus.PAID
    assert second.status == batches.PaymentStatus.SKIPPED
    assert second.reason == "already advanced by another run"
    assert second.charge_id == first.charge_id and len(receipts_of(sub)) == 1
    assert len(mail.outbox) == 1


def test_a_run_that_lost_the_race_to_mark_past_due_says_so(moto_table) -> None:
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == batches.PaymentStatus.DECLINED
    assert second.status == batches.PaymentStatus.SKIPPED
    assert second.reason == "already handled by another run"
    assert len(mail.outbox) == 1


def test_a_first_payment_declined_twice_is_ended_once(moto_table) -> None:
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D, end_on_decline=True)
    second = payments.take_payment(mine, run_date=D, end_on_decline=True)
    assert first.status == batches.PaymentStatus.CANCELLED
    assert second.status == batches.PaymentStatus.SKIPPED
    assert second.reason.endswith("; already handled by another run")
    assert fresh(stale).Status == SubscriptionStatus.CANCELLED


def test_no_retry_left_cancels_once_and_a_stale_run_says_so(moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = []
    [stale] = seed_due(1, due=D, number=DECLINED_NUMBER)
    mine, theirs = fresh(stale), fresh(stale)
    first = payments.take_payment(theirs, run_date=D)
    second = payments.take_payment(mine, run_date=D)
    assert first.status == batches.PaymentStatus.CANCELLED and first.reason.endswith("; no retry left")
    assert second.status == batches.PaymentStatus.SKIPPED
    assert second.reason == "already cancelled or changed by another run"
    [message] = mail.outbox
    assert message.subject == f"Subscription cancelled: {stale.ProductName or stale.SKU}"



# --- refunds.py: the key, the e-mail, the refusals and their audit ------------------------


def paid_receipt():
    [sub] = seed_due(1, due=D)
    payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    mail.outbox.clear()
    return receipt


def test_a_refund_is_keyed_by_charge_and_request_and_mailed(moto_table) -> None:
    receipt = paid_receipt()
    assert refunds.refund_key(receipt, "req1") == f"refund:{receipt.ChargeId}:req1"
    done = refunds.refund_receipt(receipt, 300, request_id="req1", actor="staff:ann", reason="late")
    assert done.amount == 300 and done.refund_id and done.mail_error == ""
    assert done.receipt.RefundedAmount == 300
    [message] = mail.outbox
    assert message.subject == f"Refund: {receipt.ProductName or receipt.SKU}"
    assert "Refunded now:     3.00 USD" in message.body
    assert "Refunded in all:  3.00 USD of 9.99 USD" in message.body
    assert f"Reference:        {done.refund_id}" in message.body
    assert f"your payment for {receipt.ProductName or receipt.SKU} of 2027-03-15." in message.body
    [refund] = done.receipt.Refunds
    assert refund.RefundId == done.refund_id and refund.Reason == "late" and refund.Actor == "staff:ann"
    again = refunds.refund_receipt(receipt, 300, request_id="req1", actor="staff:ann")  # a double click
    assert (again.refund_id, again.amount) == (done.refund_id, 300) and len(mail.outbox) == 1


def test_a_refund_whose_mail_fails_says_so(moto_table, monkeypatch) -> None:
    receipt = paid_receipt()

    def smtp_down(*args, **kwargs):
        raise ConnectionError("smtp down")

    monkeypatch.setattr(billing_mail, "send_mail", smtp_down)
    done = refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann")
    assert done.mail_error == "mail: ConnectionError: smtp down" and done.receipt.RefundedAmount == 100


def test_a_receipt_without_a_charge_is_refused_with_a_reason(moto_table) -> None:
    receipt = paid_receipt()
    receipt.ChargeId = None
    with pytest.raises(RefundRefused, match="^this receipt has no charge to refund$"):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann")


def test_a_refused_refund_says_why_and_leaves_an_audit_event(moto_table) -> None:
    receipt = paid_receipt()
    with pytest.raises(RefundRefused, match="^refund exceeds the amount charged$"):
        refunds.refund_receipt(receipt, 5000, request_id="r", actor="staff:ann")
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Actor == "staff:ann" and event.Subject == receipt.SK
    assert event.Note == "refund exceeds the amount charged" and event.Before == event.After
    assert event.Before == {"BillingDate": "2027-03-15", "ProcessedAmount": 999, "Currency": "USD", "Status": "paid",
                            "RefundedAmount": 0, "Refunds": []}
    assert mail.outbox == []


def test_an_unreachable_gateway_on_refund_is_audited_and_raised(moto_table) -> None:
    receipt = paid_receipt()

    class Down:
        def refund(self, *args, **kwargs):
            raise GatewayError("connection reset")

    with pytest.raises(GatewayError):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann", gateway=Down())
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Note == "gateway unreachable: connection reset"
    assert event.Before == event.After and event.Before["RefundedAmount"] == 0  # the receipt as it was


def test_a_refund_without_a_reason_tells_the_gateway_it_is_a_staff_refund_and_records_none(moto_table) -> None:
    receipt = paid_receipt()
    real, asked = get_gateway(), []

    class Recording:
        def refund(self, *args, **kwargs):
            asked.append(kwargs)
            return real.refund(*args, **kwargs)

    done = refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann", gateway=Recording())
    assert asked == [{"idempotency_key": f"refund:{receipt.ChargeId}:r1", "reason": "staff refund"}]
    [entry] = done.receipt.Refunds
    assert entry.Reason is None
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund"]
    assert event.Note is None


def test_a_long_failure_is_audited_in_its_first_500_characters(moto_table) -> None:
    receipt = paid_receipt()

    class Down:
        def refund(self, *args, **kwargs):
            raise GatewayError("x" * 600)

    with pytest.raises(GatewayError):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann", gateway=Down())
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Note == ("gateway unreachable: " + "x" * 600)[:500]


# --- access/receipts.py: what a receipt and its payment event hold ----------------------


def test_a_paid_receipt_holds_the_period_card_time_and_ttl_and_its_event_the_charge(moto_table, settings) -> None:
    settings.RECEIPT_RETENTION_DAYS = 30
    [sub] = seed_due(1, due=D)
    # microseconds in the clock: the receipt keeps the time to the second only
    with time_machine.travel(datetime(2027, 3, 15, 9, 30, 5, 123456, tzinfo=UTC), tick=False):
        out = payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    assert f"REC#2027-03-15#SKU#{sub.SKU}#SUB#{sub.sub_id}" == receipt.SK
    assert (receipt.sub_id, receipt.SKU, receipt.ProductName, receipt.Email) == (
        sub.sub_id, sub.SKU, sub.ProductName, sub.Email)
    assert (receipt.BillingDate, receipt.PeriodStart, receipt.PeriodEnd) == ("2027-03-15", "2027-03-15", "2027-04-14")
    assert receipt.ProcessedDate == "2027-03-15T09:30:05+00:00"
    assert (receipt.ProcessedAmount, receipt.Currency, receipt.ChargeId) == (out.amount, sub.Currency, out.charge_id)
    assert receipt.CardBrand == sub.PaymentDetails.Brand and receipt.CardBrand
    assert receipt.CardLast4 == sub.PaymentDetails.Last4 == "4242"
    assert datetime(2027, 4, 14, tzinfo=UTC) == receipt.TTL  # midnight UTC of the billing date + 30 days
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.succeeded"]
    assert (event.Actor, event.Subject) == ("batch", sub.SK)
    assert receipt.Number == "R-2027-000001"  # the year's first number
    assert event.After == {"Receipt": receipt.SK, "Amount": out.amount, "Currency": sub.Currency,
                           "ChargeId": out.charge_id, "PeriodStart": "2027-03-15", "PeriodEnd": "2027-04-14",
                           "Number": receipt.Number}


def test_a_receipt_recorded_by_hand_defaults_to_the_batch_and_no_period_end(moto_table) -> None:
    # seed_demo's call: no actor, no period end, an explicit processing time
    [sub] = seed_due(1, due=D)
    at = datetime(2027, 3, 16, 8, 0, 1, 999999, tzinfo=UTC)
    receipt, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch_1",
                                             retention_days=1, processed_at=at)
    assert created and receipt.PeriodEnd is None and receipt.ProcessedDate == "2027-03-16T08:00:01+00:00"
    assert datetime(2027, 3, 16, tzinfo=UTC) == receipt.TTL
    again, created_again = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch_2",
                                                 retention_days=1, processed_at=at)
    assert not created_again and again.SK == receipt.SK
    [stored] = receipts_of(sub)
    assert stored.ChargeId == "ch_1"  # the first one stays
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.succeeded"]
    assert event.Actor == "batch" and event.After["PeriodEnd"] is None


# --- access/batch_writes.py: the reminder claim -----------------------------------------


def test_a_reminder_claim_moves_the_reminder_on_once(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    day = date.fromisoformat(sub.NextReminderDate)
    mine, theirs = fresh(sub), fresh(sub)
    access.claim_reminder(theirs, day=day, next_reminder=date(2027, 4, 8))
    after = fresh(sub)
    assert (after.LastReminderDate, after.NextReminderDate) == (day.isoformat(), "2027-04-08")
    assert after.NextPaymentDate == D.isoformat()  # the payment is not touched
    with pytest.raises(access.ConditionFailed):
        access.claim_reminder(mine, day=day, next_reminder=date(2027, 4, 8))


def test_a_reminder_of_a_cancelled_subscription_is_not_claimed(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    day = date.fromisoformat(sub.NextReminderDate)
    stale = fresh(sub)
    access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
    with pytest.raises(access.ConditionFailed):
        access.claim_reminder(stale, day=day, next_reminder=date(2027, 4, 8))


# --- access/receipts.py: recording refunds ------------------------------------------------


def refund_events(receipt) -> list:
    """The receipt's ``staff.refund`` events, oldest first."""
    return sorted((e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund"),
                  key=lambda e: e.SK)


def test_refunds_add_up_to_the_charge_and_each_is_audited_before_and_after(moto_table) -> None:
    receipt = paid_receipt()  # 9.99 USD
    with time_machine.travel(datetime(2027, 3, 20, 10, 0, 0, 500000, tzinfo=UTC), tick=False):
        part, added = access.record_refund(receipt, refund_id="re_1", amount=300, actor="staff:ann", reason="late")
    assert added and (part.Status, part.RefundedAmount) == ("partially_refunded", 300)
    [entry] = part.Refunds
    assert (entry.RefundId, entry.Amount, entry.At, entry.Actor, entry.Reason) == (
        "re_1", 300, "2027-03-20T10:00:00+00:00", "staff:ann", "late")
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):  # exactly what is left
        full, added = access.record_refund(part, refund_id="re_2", amount=699, actor="staff:bob")
    assert added and (full.Status, full.RefundedAmount) == ("refunded", 999)
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert (stored.Status, stored.RefundedAmount) == ("refunded", 999)
    assert [(r.RefundId, r.Amount, r.Reason) for r in stored.Refunds] == [("re_1", 300, "late"), ("re_2", 699, None)]
    first, second = refund_events(receipt)
    snapshot = {"BillingDate": "2027-03-15", "ProcessedAmount": 999, "Currency": "USD"}
    assert (first.Actor, first.Subject, first.Note) == ("staff:ann", receipt.SK, "late")
    assert first.Before == {**snapshot, "Status": "paid", "RefundedAmount": 0, "Refunds": []}
    assert first.After == {**snapshot, "Status": "partially_refunded", "RefundedAmount": 300, "Refunds": ["re_1"]}
    assert (second.Actor, second.Note) == ("staff:bob", None)
    assert second.After == {**snapshot, "Status": "refunded", "RefundedAmount": 999, "Refunds": ["re_1", "re_2"]}
    with pytest.raises(ValueError, match="^refund exceeds the amount charged$"):
        access.record_refund(full, refund_id="re_3", amount=1, actor="staff:ann")


@pytest.mark.parametrize("amount", [0, -1, 1.5, "1"])
def test_a_refund_of_no_whole_positive_amount_is_refused(moto_table, amount) -> None:
    receipt = paid_receipt()
    with pytest.raises(ValueError, match="^amount must be a positive integer number of minor units$"):
        access.record_refund(receipt, refund_id="re_1", amount=amount, actor="staff:ann")
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 0


def test_the_smallest_refund_is_one_minor_unit(moto_table) -> None:
    receipt = paid_receipt()
    done, added = access.record_refund(receipt, refund_id="re_1", amount=1, actor="staff:ann")
    assert added and done.RefundedAmount == 1


def test_a_refund_refused_on_every_attempt_gives_up_after_three_reads(moto_table, monkeypatch) -> None:
    receipt = paid_receipt()
    stale = access.get_receipt(receipt.account_id, receipt.SK)
    access.record_refund(receipt, refund_id="re_1", amount=100, actor="staff:ann")
    reads = []

    def stale_read(account_id, receipt_sk):  # another refund lands before each retry
        reads.append(receipt_sk)
        return stale

    monkeypatch.setattr(receipts_module, "get_receipt", stale_read)
    with pytest.raises(access.ConditionFailed, match=receipt.SK):  # the refusal names the receipt
        access.record_refund(stale, refund_id="re_2", amount=100, actor="staff:bob")
    assert reads == [receipt.SK] * 3
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 100


def test_a_refund_of_a_receipt_that_is_gone_is_refused(moto_table) -> None:
    receipt = paid_receipt()
    access.get_receipt(receipt.account_id, receipt.SK).delete()
    with pytest.raises(access.ConditionFailed, match=receipt.SK):
        access.record_refund(receipt, refund_id="re_1", amount=100, actor="staff:ann")


def test_a_receipt_stored_without_a_refunded_amount_takes_its_first_refund(moto_table) -> None:
    # receipts written before RefundedAmount existed have no such attribute
    receipt = paid_receipt()
    receipt.update(actions=[Receipt.RefundedAmount.remove()])
    old = access.get_receipt(receipt.account_id, receipt.SK)
    old.RefundedAmount = None
    done, added = access.record_refund(old, refund_id="re_1", amount=100, actor="staff:ann")
    assert added and access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 100


# --- payments.py: a declined period, retried with its own keys, then ended ----------------


def test_a_declined_period_is_retried_with_its_own_key_and_metadata_until_no_retry_is_left(
        moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [2, 5]
    settings.REMINDER_DAYS_BEFORE = 7
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    charged_with = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "billing_date": "2027-03-15",
                    "period_start": "2027-03-15", "period_end": "2027-04-14", "payment_day": "15"}

    first = payments.take_payment(fresh(sub), run_date=D)
    assert (first.status, first.attempt, first.reason) == (batches.PaymentStatus.DECLINED, 0,
                                                           "card_declined; retry on 2027-03-17")
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount) == (SubscriptionStatus.PAST_DUE, "2027-03-15", 0)
    # retried 2 days on; reminded of the next anchor date (15 Apr) 7 days before it
    assert (after.NextPaymentDate, after.NextReminderDate) == ("2027-03-17", "2027-04-08")

    second = payments.take_payment(after, run_date=date(2027, 3, 17))
    assert (second.status, second.attempt, second.next_payment) == (batches.PaymentStatus.DECLINED, 1,
                                                                     date(2027, 3, 20))  # the gap 5 - 2
    assert (second.period, second.period_end) == (D, date(2027, 4, 14))  # still the owed period
    assert fresh(sub).RetryCount == 1

    third = payments.take_payment(fresh(sub), run_date=date(2027, 3, 20))
    assert (third.status, third.attempt, third.reason) == (batches.PaymentStatus.CANCELLED, 2,
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
    assert out.status == batches.PaymentStatus.DECLINED and out.attempt == 1
    # both events fall in the same second: tell them apart by actor, not by key order
    declined = [e.Actor for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.declined"]
    assert sorted(declined) == ["batch", "staff:ann"]


def test_an_active_subscription_is_not_charged_before_its_date(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=date(2027, 3, 14))
    assert (out.status, out.reason, out.due) == (batches.PaymentStatus.SKIPPED, "not due until 2027-03-15", D)
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []


def test_a_dry_run_says_what_it_would_charge_and_charges_nothing(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D, dry_run=True)
    assert (out.status, out.reason, out.amount) == (batches.PaymentStatus.DRY_RUN, "would charge 9.99 USD", 999)
    assert (out.period, out.period_end) == (D, date(2027, 4, 14))
    assert get_gateway().charges_made(sub_id=sub.sub_id) == [] and fresh(sub).NextPaymentDate == D.isoformat()


# --- payments.py: recording a charge the gateway made (reconciliation's path) --------------


def charge_for(sub, *, start: date, end: date, **extra: str):
    """A charge the gateway really made for ``start``..``end``, as reconciliation finds it."""
    metadata = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU,
                "period_start": start.isoformat(), "period_end": end.isoformat(), **extra}
    return get_gateway().charge(sub.PaymentDetails.Token, 999, "USD", f"{sub.sub_id}:{start}", metadata)


def test_a_charge_recorded_after_cancel_extends_the_service_once(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=date(2027, 4, 14), attempt="0")
    access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
    first = payments.record_paid_charge(fresh(sub), result, run_date=D)
    assert (first.status, first.reason) == (batches.PaymentStatus.PAID, "paid after cancel: service runs to 2027-04-14")
    after = fresh(sub)
    assert (after.Status, after.PaidThroughDate, after.LastPaymentDate) == (
        SubscriptionStatus.CANCELLED, "2027-04-14", "2027-03-15")
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == "payment.succeeded_after_cancel"]
    assert event.Actor == "batch" and event.After["PaidThroughDate"] == "2027-04-14"
    again = payments.record_paid_charge(fresh(sub), result, run_date=D)
    assert (again.status, again.reason) == (batches.PaymentStatus.SKIPPED, "already recorded")
    assert len(receipts_of(sub)) == 1 and len(mail.outbox) == 1


def test_a_charge_of_a_past_due_period_is_recorded_on_its_retry_date(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    payments.take_payment(sub, run_date=D)  # declined: retried on the 16th
    result = charge_for(fresh(sub), start=D, end=date(2027, 4, 14))  # no attempt in its metadata
    out = payments.record_paid_charge(fresh(sub), result, run_date=date(2027, 3, 16))
    assert (out.status, out.due, out.attempt, out.next_payment) == (
        batches.PaymentStatus.PAID, date(2027, 3, 16), 0, date(2027, 4, 15))
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
        batches.PaymentStatus.PAID, D, date(2027, 4, 14), date(2027, 4, 15))
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd) == ("2027-03-15", "2027-04-14")


def test_a_declined_first_payment_ends_the_subscription_with_its_reason(moto_table) -> None:
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.Email.set("new@example.com")])  # a newer version
    out = payments.take_first_payment(stale, today=D, actor="pat@example.com")
    assert (out.status, out.reason) == (batches.PaymentStatus.CANCELLED, "card_declined")
    after = fresh(sub)
    assert (after.Status, after.CancelReason) == (SubscriptionStatus.CANCELLED, "first_payment_declined")


# --- the 24 Nov 2026 run's survivors (docs/MUTATION.md) ------------------------------------


class NoDeclineCode:
    """The simulated gateway, but its declines come back without a code (some processors
    send none)."""

    def charge(self, *args, **kwargs):
        return dataclasses.replace(get_gateway().charge(*args, **kwargs), decline_code=None)


def events_of(sub, action: str) -> list:
    return [e for e in access.get_events_by_account(sub.account_id) if e.Action == action]


def test_a_decline_is_audited_and_mailed_with_the_amount_tried(moto_table) -> None:
    # Paying day 20 from the 15th: the period runs to 19 April, so the amount tried is
    # more than the monthly price the subscription's own context would show.
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER, payment_day=20)
    out = payments.take_payment(sub, run_date=D, actor="staff:ann")
    assert out.status == batches.PaymentStatus.DECLINED and out.amount > sub.PaymentAmount
    [event] = events_of(sub, "payment.declined")
    assert (event.Actor, event.Subject, event.Note) == ("staff:ann", sub.SK, "card_declined")
    assert (event.Before["Status"], event.Before["RetryCount"]) == ("active", 0)
    assert (event.After["Status"], event.After["BillingPeriod"]) == ("past_due", "2027-03-15")
    assert (event.After["Amount"], event.After["Product"]) == (out.amount, sub.ProductName)
    [message] = mail.outbox
    assert money.format_with_code(out.amount, "USD") in message.body
    assert money.format_with_code(sub.PaymentAmount, "USD") not in message.body


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
    assert (ended.status, ended.reason) == (batches.PaymentStatus.CANCELLED, "declined")


def test_the_batch_writes_ignore_a_newer_version_from_an_unrelated_change(moto_table, settings) -> None:
    # A change that leaves the dates alone (the customer's new e-mail) lands between the
    # run's read and its write: the decline, the reminder claim and the last decline's
    # cancel still go through. Only the date is the race the runs must win.
    def bump(sub) -> None:
        access.update_subscription(fresh(sub), [Subscription.Email.set("new@example.com")])

    [declining] = seed_due(1, due=D, number=DECLINED_NUMBER)
    stale = fresh(declining)
    bump(declining)
    assert payments.take_payment(stale, run_date=D).status == batches.PaymentStatus.DECLINED
    assert fresh(declining).Status == SubscriptionStatus.PAST_DUE

    [paying] = seed_due(1, due=D, prefix="p")
    stale = fresh(paying)
    bump(paying)
    assert payments.take_payment(stale, run_date=D).status == batches.PaymentStatus.PAID
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
    assert out.status == batches.PaymentStatus.CANCELLED
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
    assert (out.status, out.period, out.period_end) == (batches.PaymentStatus.PAID, D, date(2027, 4, 14))
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
    assert (out.status, out.reason, out.due) == (batches.PaymentStatus.SKIPPED, "already advanced by another run", D)
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


def test_a_refund_is_mailed_in_the_language_of_its_receipt(moto_table) -> None:
    from django.utils import translation

    [sub] = seed_due(1, due=D, language="it")
    payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    assert receipt.Language == "it"
    mail.outbox.clear()
    refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann")
    with translation.override("it"):
        subject = translation.gettext("Refund: {product}").format(product=receipt.ProductName)
    [message] = mail.outbox
    assert message.subject == subject and subject != f"Refund: {receipt.ProductName}"


def test_a_receipt_url_by_key_or_number_hides_an_expired_receipt(moto_table, settings) -> None:
    settings.RECEIPT_RETENTION_DAYS = 30
    receipt = paid_receipt()
    ttl = receipt.TTL
    for url_id in (receipt.SK, receipt.Number):
        assert access.get_receipt_for_url(receipt.account_id, url_id).SK == receipt.SK
        assert access.get_receipt_for_url(receipt.account_id, url_id, now=ttl.replace(year=ttl.year + 1)) is None
        assert access.get_receipt_for_url("acctother", url_id) is None


@pytest.mark.parametrize(("language", "amount", "currency", "text"), [
    ("it", 999, "EUR", "9,99\xa0€"), ("ko", 9900, "KRW", "₩9,900"), ("it", 1234, "KWD", "1,234\xa0KWD"),
    ("zh-hans", 123456, "JPY", "JP¥123,456"),
])
def test_a_price_for_customers_follows_the_active_language(language, amount, currency, text) -> None:
    from django.utils import translation

    with translation.override(language):
        assert money.format_with_symbol(amount, currency) == text


@pytest.mark.parametrize(("language", "amount", "currency", "text"), [
    ("it", 999, "eur", "9,99 EUR"), ("ko", 9900, "krw", "9,900 KRW"), ("it", 1234, "kwd", "1,234 KWD"),
    ("zh-hans", -1050, "usd", "-10.50 USD"),
])
def test_an_amount_with_its_code_follows_the_active_language(language, amount, currency, text) -> None:
    from django.utils import translation

    with translation.override(language):
        assert money.format_with_code(amount, currency) == text


def test_a_first_payment_is_the_customers_and_goes_through_the_gateway_given(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    assert payments.take_first_payment(sub, today=D).status == batches.PaymentStatus.PAID
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
    assert (out.status, out.charge_id, out.period_end) == (batches.PaymentStatus.PAID, first.charge_id, date(2027, 4, 14))
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
    assert money.format_with_code(out.amount, "USD") in message.body
    assert money.format_with_code(sub.PaymentAmount, "USD") not in message.body
    assert f"/receipts/{receipt.Number}/" in message.body


def test_a_receipt_for_a_subscription_without_card_details_has_no_card(moto_table) -> None:
    # made before card details were kept: the receipt says nothing about a card
    [sub] = seed_due(1, due=D)
    sub.PaymentDetails = None
    receipt, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch_1",
                                             retention_days=30)
    assert created and (receipt.CardBrand, receipt.CardLast4) == (None, None)


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
    assert message.subject == subject and subject.startswith("Ricevuta")


def test_an_amount_without_a_currency_shows_the_number_alone(settings) -> None:
    from django.utils import translation

    with translation.override("it"):
        assert money.format_with_code(999, "").strip() == "9,99"
