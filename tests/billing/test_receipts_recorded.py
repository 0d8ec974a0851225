"""What a paid receipt and its payment event hold, the reminder claim, and receipt URLs
that hide an expired receipt."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.operations import payments
from tests.builders import fresh, paid_receipt, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


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
    assert re.fullmatch(r"R-2027-S[0-9]{2}-000001", receipt.Number)  # its series' first number that year
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


def test_a_receipt_url_by_key_or_number_hides_an_expired_receipt(moto_table, settings) -> None:
    settings.RECEIPT_RETENTION_DAYS = 30
    receipt = paid_receipt()
    ttl = receipt.TTL
    for url_id in (receipt.SK, receipt.Number):
        assert access.get_receipt_for_url(receipt.account_id, url_id).SK == receipt.SK
        assert access.get_receipt_for_url(receipt.account_id, url_id, now=ttl.replace(year=ttl.year + 1)) is None
        assert access.get_receipt_for_url("acctother", url_id) is None


def test_a_receipt_for_a_subscription_without_card_details_has_no_card(moto_table) -> None:
    # made before card details were kept: the receipt says nothing about a card
    [sub] = seed_due(1, due=D)
    sub.PaymentDetails = None
    receipt, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch_1",
                                             retention_days=30)
    assert created and (receipt.CardBrand, receipt.CardLast4) == (None, None)


def test_a_switch_charge_recorded_by_the_reconciliation_is_kept_as_a_switch(moto_table) -> None:
    # refund_unapplied_switch's call: the receipt says what it was for (its page shows the
    # switch's charge, not a renewal).
    [sub] = seed_due(1, due=D)
    access.create_receipt(sub, billing_date=D, amount=500, currency="USD", charge_id="ch_switch", retention_days=30,
                          kind="switch", actor="reconcile")
    [stored] = receipts_of(sub)
    assert (stored.Kind, stored.ProcessedAmount, stored.ChargeId) == ("switch", 500, "ch_switch")
