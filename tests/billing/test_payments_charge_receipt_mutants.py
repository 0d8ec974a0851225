"""Pins down what the charge and the receipt e-mail do (billing/operations/payments.py
``_charge`` and ``send_receipt``): the gateway is asked with the card, amount, currency,
key, metadata and session of the payment, on every attempt, three attempts at most with
pauses of 0.2 s then 0.4 s; the receipt e-mail names, line by line, what was charged, for
what, when, under which number and where to find it, in the customer's language, from the
stored receipt when another run wrote it."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest
from django.conf import settings
from django.core import mail
from django.urls import reverse

from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.payments.errors import GatewayError
from core.payments.gateway import ChargeResult
from tests.billing.test_payment_paths import FlakyGateway
from tests.builders import fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)  # pays 15 March to 14 April
LAST_DAY = date(2027, 4, 14)
NEXT = date(2027, 4, 15)
METADATA = {"account_id": "acct1", "sub_id": "s1", "period_start": "2027-03-15"}


class RecordingGateway(FlakyGateway):
    """test_payment_paths' gateway (the simulated one behind a connection that fails the
    first ``failures`` calls) that also keeps every call's arguments as it got them."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__(failures)
        self.asked: list[tuple] = []

    def charge(self, *args, **kwargs) -> ChargeResult:
        self.asked.append((args, kwargs))
        return super().charge(*args, **kwargs)


@pytest.mark.parametrize("off_session", [True, False])
def test_the_charge_asks_the_gateway_with_the_payment_s_card_amount_currency_key_and_metadata(
        moto_table, sleeps, off_session) -> None:
    """The first attempt answered: one call, with the subscription's card token and
    currency, the amount, the idempotency key, the metadata, and whether the customer is
    there, exactly as given."""
    [sub] = seed_due(1, due=D)
    gateway = RecordingGateway()
    result = payments._charge(gateway, sub, "s000000:2027-03-15", 1234, dict(METADATA), off_session=off_session)
    assert (result.status, result.amount, result.currency) == ("succeeded", 1234, "USD") and result.charge_id
    [(args, kwargs)] = gateway.asked
    assert args == (sub.PaymentDetails.Token, 1234, "USD", "s000000:2027-03-15", METADATA)
    assert kwargs == {"off_session": off_session} and kwargs["off_session"] is off_session
    assert sleeps == []


@pytest.mark.parametrize("off_session", [True, False])
def test_the_last_attempt_asks_the_gateway_with_the_same_payment(moto_table, sleeps, off_session) -> None:
    """Two unanswered attempts, then the third and last answers: the same call three times
    (a repeated key is safe), after pauses of 0.2 s and 0.4 s."""
    [sub] = seed_due(1, due=D)
    gateway = RecordingGateway(failures=2)
    result = payments._charge(gateway, sub, "s000000:2027-03-15", 1234, dict(METADATA), off_session=off_session)
    assert result.status == "succeeded" and result.charge_id
    expected = ((sub.PaymentDetails.Token, 1234, "USD", "s000000:2027-03-15", METADATA), {"off_session": off_session})
    assert gateway.asked == [expected] * 3
    assert all(kwargs["off_session"] is off_session for _, kwargs in gateway.asked)
    assert sleeps == [0.2, 0.4]


def test_a_gateway_that_never_answers_is_tried_three_times_and_its_error_reaches_the_caller(moto_table,
                                                                                           sleeps) -> None:
    """Never answered: three attempts, no more; the last one's error is the caller's."""
    [sub] = seed_due(1, due=D)
    gateway = RecordingGateway(failures=10)
    with pytest.raises(GatewayError, match="timeout 3"):
        payments._charge(gateway, sub, "s000000:2027-03-15", 1234, dict(METADATA), off_session=True)
    assert len(gateway.asked) == 3
    assert sleeps == [0.2, 0.4]


def test_an_answer_after_one_unanswered_attempt_is_taken(moto_table, sleeps) -> None:
    """One attempt unanswered, the second answers: two calls, one pause."""
    [sub] = seed_due(1, due=D)
    gateway = RecordingGateway(failures=1)
    assert payments._charge(gateway, sub, "k", 999, {}, off_session=True).status == "succeeded"
    assert len(gateway.asked) == 2
    assert sleeps == [0.2]


def paid(sub):
    """The subscription paid on D by the payment path: its receipt, its e-mail cleared."""
    assert payments.take_payment(sub, run_date=D).status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    mail.outbox.clear()
    return receipt


def charged(amount: int = 1234, charge_id: str = "ch_test_1") -> ChargeResult:
    return ChargeResult(status="succeeded", charge_id=charge_id, amount=amount, currency="USD")


def body_lines(message) -> list[str]:
    return [line.strip() for line in message.body.splitlines()]


def test_the_receipt_e_mail_says_what_was_charged_for_what_and_where_its_invoice_is(moto_table,
                                                                                   ddb_requests) -> None:
    """The receipt just written: no read of it; the e-mail goes to the subscription's
    address, its subject the receipt's; it says the amount charged (not the plan's price),
    the product of the receipt (the subscription may have switched since), the billing
    date, the period paid, the card, the charge's reference, the next payment, the
    receipt's number and its invoice's address."""
    [sub] = seed_due(1, due=D)
    receipt = paid(sub)
    sub = fresh(sub)
    assert sub.PaymentAmount != 1234
    sub.ProductName = "Weekly Digest"  # switched since the charge: the receipt still says what was paid for
    assert receipt.ProductName not in (None, sub.SKU, receipt.SKU)
    ddb_requests.reset()
    error = payments.send_receipt(sub, receipt, True, charged(), D, LAST_DAY, NEXT)
    assert error == ""
    assert ddb_requests.by_name() == Counter()
    [message] = mail.outbox
    assert message.to == [sub.Email]
    assert message.subject == f"Invoice {receipt.Number}: {receipt.ProductName}, 15 March 2027"
    path = reverse("receipt", args=[receipt.url_id])
    lines = body_lines(message)
    assert f"Thank you: we received your payment for {receipt.ProductName}." in lines
    assert f"Invoice number: {receipt.Number}" in lines
    assert f"Receipt:      {receipt.Number}" in lines
    assert "Amount:       $12.34" in lines
    assert "Billing date: 15 March 2027" in lines
    assert "Pays for:     15 March 2027 to 14 April 2027" in lines
    assert f"Card:         {sub.PaymentDetails.Brand} ending {sub.PaymentDetails.Last4}" in lines
    assert "Reference:    ch_test_1" in lines
    assert "Your next payment is due on 15 April 2027. Your invoice, and its PDF, is at" in lines
    assert settings.SITE_URL.rstrip("/") + path in lines
    assert f'<a href="{settings.SITE_URL.rstrip("/")}{path}">' in message.alternatives[0][0]


def test_a_receipt_of_nothing_charged_says_so_and_names_no_card(moto_table) -> None:
    """A coupon took the payment whole: nothing charged, no reference, no card; without a
    next payment it says the subscription ends with the period paid."""
    [sub] = seed_due(1, due=D)
    receipt = paid(sub)
    sub = fresh(sub)
    assert payments.send_receipt(sub, receipt, True, charged(0, ""), D, LAST_DAY, None) == ""
    [message] = mail.outbox
    lines = body_lines(message)
    assert (f"Nothing was charged for {receipt.ProductName}: the discount takes this payment whole, "
            "and its invoice is paid.") in lines
    assert "Amount:       $0.00" in lines
    assert not any(line.startswith(("Card:", "Reference:", "Thank you")) for line in lines)
    assert any(line.startswith("You have paid for it up to 14 April 2027: it runs until the end of that day")
               for line in lines)


def test_a_receipt_of_one_cent_is_a_charge(moto_table) -> None:
    """Any amount above nothing is a payment received, with its card."""
    [sub] = seed_due(1, due=D)
    receipt = paid(sub)
    sub = fresh(sub)
    assert payments.send_receipt(sub, receipt, True, charged(1), D, LAST_DAY, NEXT) == ""
    lines = body_lines(mail.outbox[0])
    assert f"Thank you: we received your payment for {receipt.ProductName}." in lines
    assert "Amount:       $0.01" in lines
    assert any(line.startswith("Card:") for line in lines)


def test_a_receipt_written_by_another_run_is_mailed_as_stored(moto_table, ddb_requests) -> None:
    """The receipt was written by another run (not created here): the e-mail is the stored
    receipt's, its number included, read with one GetItem."""
    [sub] = seed_due(1, due=D)
    stored = paid(sub)
    [mine] = receipts_of(sub)
    mine.Number = None  # what this run holds does not know the stored receipt's number
    sub = fresh(sub)
    ddb_requests.reset()
    assert payments.send_receipt(sub, mine, False, charged(), D, LAST_DAY, NEXT) == ""
    assert ddb_requests.by_name() == Counter({"GetItem": 1})
    [message] = mail.outbox
    assert message.subject.startswith(f"Invoice {stored.Number}:")
    assert f"Receipt:      {stored.Number}" in body_lines(message)


def test_the_receipt_e_mail_is_in_the_customer_s_language(moto_table) -> None:
    """An Italian customer's receipt e-mail, sent from an English page: Italian words and
    dates."""
    [sub] = seed_due(1, due=D)
    receipt = paid(sub)
    sub = fresh(sub)
    sub.Language = "it"
    assert payments.send_receipt(sub, receipt, True, charged(), D, LAST_DAY, NEXT) == ""
    [message] = mail.outbox
    assert message.subject == f"Fattura {receipt.Number}: {receipt.ProductName}, 15 marzo 2027"
    assert "Data di fatturazione: 15 marzo 2027" in body_lines(message)
