"""The expiring-card warning: a card that expires before the payment a reminder
announces adds a warning to that reminder e-mail, from GSI-1's projection alone (no read
per item). Run through the command on the day, with time-machine."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from io import StringIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command

from billing import access
from billing.models import PaymentDetails
from billing.rules.card_expiry import expires_before
from core.payments.gateway import CardToken
from tests.builders import due_subscription

pytestmark = pytest.mark.django_db(databases=[])

REMIND = date(2027, 3, 8)  # reminders for payments on 15 March 2027
PAY = date(2027, 3, 15)


def visa(month: int, year: int) -> CardToken:
    return CardToken(token=f"tok_{month}_{year}", brand="Visa", last4="4242", exp_month=month, exp_year=year)


def test_expires_before_is_the_end_of_the_expiry_month() -> None:
    def card(month: int, year: int) -> PaymentDetails:
        return PaymentDetails(Token="t", Brand="Visa", Last4="4242", ExpMonth=month, ExpYear=year)

    assert expires_before(card(2, 2027), PAY)
    assert expires_before(card(12, 2026), PAY)
    assert not expires_before(card(3, 2027), PAY)  # good through 31 March
    assert not expires_before(card(1, 2028), PAY)
    assert not expires_before(None, PAY)


def test_a_card_expiring_before_the_payment_adds_a_warning(table, ddb_requests, settings) -> None:
    settings.SITE_URL = "https://rpay.example.com"
    expiring = due_subscription(1, due=PAY, card=visa(2, 2027), prefix="exp")
    good = due_subscription(2, due=PAY, card=visa(3, 2027), prefix="ok")
    access.batch_items([expiring, good])
    ddb_requests.reset()
    with time_machine.travel(datetime(2027, 3, 8, 6, tzinfo=UTC), tick=False):
        call_command("send_reminders", stdout=StringIO())
    # the index query, one claim per reminder, the run's record: nothing read per item (the
    # GetItems are the table's due-shard count, META#TABLE, read once per process, and the
    # seller's tax profile, once per run: two items would make more if the card were read
    # per item)
    ops = ddb_requests.by_name()
    assert ops["Query"] >= 1 and ops["UpdateItem"] >= 2 and ops.get("GetItem", 0) <= 2 and "BatchGetItem" not in ops
    by_to = {m.to[0]: m for m in mail.outbox}
    assert set(by_to) == {expiring.Email, good.Email}  # one e-mail each: the warning is in the reminder
    warned = by_to[expiring.Email]
    for text in (warned.body, warned.alternatives[0][0]):
        assert "expires at the end of 02/2027" in text and "15 March 2027" in text
        assert f"https://rpay.example.com/subscriptions/{expiring.sub_id}/card/" in text
    for text in (by_to[good.Email].body, by_to[good.Email].alternatives[0][0]):
        assert "expires" not in text
    assert Counter(m.to[0] for m in mail.outbox) == Counter({expiring.Email: 1, good.Email: 1})
