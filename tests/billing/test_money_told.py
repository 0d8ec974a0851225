"""What a customer is told a payment is, against what it is: the amount a reminder, the
switch e-mail and the cancel page say comes from the function that charges (or refunds)
it, so each test lets the run take the payment afterwards and compares. A free trial's
reminder comes once per payment; a switch's charge sends its invoice as every charge
does; a payment a coupon takes whole is an invoice of 0, paid, with no gateway call. On
moto and DynamoDB Local."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date, timedelta
from itertools import count

import pytest
import time_machine
from django.core import mail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import lifecycle, switch
from billing.actions import subscriptions as subscribing
from billing.operations import payments
from core.money import format_with_symbol
from core.payments.gateway import get_gateway
from tests.builders import PASSWORD, card, fresh, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def charged(sub) -> dict[str, int]:
    """The gateway's charges of ``sub`` (its ledger), by the first day each pays for."""
    return {c["metadata"]["period_start"]: c["amount"] for c in get_gateway().charges_made(sub_id=sub.sub_id)}


def told(message) -> tuple[date, str]:
    """A reminder's payment day and amount, as its text says them."""
    amount = re.search(r"Amount:\s+(\S+)", message.body)[1]
    day = re.search(r"Date:\s+(\d+ \w+ \d{4})", message.body)[1]
    return date.fromisoformat(_iso(day)), amount


def _iso(text: str) -> str:
    day, month, year = text.split()
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"]
    return f"{year}-{months.index(month) + 1:02d}-{int(day):02d}"


def day_by_day(sub, until: date) -> dict[date, list[str]]:
    """The reminder run then the payment run, as cron runs them, on each day from the
    subscription's first to ``until`` that has something of it due (a day with nothing due
    for it changes nothing of it); the reminders' amounts by the payment day they announce."""
    reminded: dict[date, list[str]] = defaultdict(list)
    day = MADE
    while day <= until:
        with at(day):
            mail.outbox.clear()
            batches.run_reminders(run_date=day, workers=1)
            for message in (m for m in mail.outbox if m.to == [sub.Email]):  # other examples' on the table
                payment, amount = told(message)
                reminded[payment].append(amount)
            batches.run_payments(run_date=day, workers=1)
        now = fresh(sub)
        due = [date.fromisoformat(d) for d in (now.NextReminderDate, now.NextPaymentDate) if d]
        if not due:
            break
        day = max(day + timedelta(days=1), min(due))
    return reminded


_made = count()


def trial_with_coupon(*, payment_day: int, trial_days: int, percent_off: int = 90):
    """A trial of a product of its own, 90 % off for ever (names of their own: a hypothesis
    example runs on the test's table)."""
    n = next(_made)
    sku, code = f"GYM{n}", f"NINETY{n}"
    access.create_product(sku, "City Gym", 4500, "USD", trial_days=trial_days)
    access.create_coupon(code, actor="staff", percent_off=percent_off, duration="forever")
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account(f"trial{n}@example.com"), sku=sku, product_name="City Gym",
            payment_day=payment_day, amount=4500, currency="USD", card=card(), today=MADE, actor="customer",
            coupon=access.get_coupon(code), trial_days=trial_days)
    assert started.sub.TrialEnd
    return started.sub


def as_told(amount: int) -> str:
    return format_with_symbol(amount, "USD")  # as the pages write it: "$45.00"


# --- reminders: the amount the run charges, once per payment -----------------------------------


def test_a_trial_ending_into_a_short_discounted_period_is_reminded_once_per_payment_at_what_is_charged(
        table) -> None:
    # 14 free days, 10..23 March; the first charge on 24 March pays 24..25 March (payment day
    # 26), 90 % off: a few cents; then 26 March, a month at 4.50.
    sub = trial_with_coupon(payment_day=26, trial_days=14)
    reminded = day_by_day(sub, date(2027, 4, 30))
    paid = charged(sub)
    assert paid == {"2027-03-24": 32, "2027-03-26": 450, "2027-04-26": 450}
    # every payment reminded exactly once, at the amount then charged for it
    assert dict(reminded) == {date.fromisoformat(day): [as_told(amount)] for day, amount in paid.items()}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trial_days=st.integers(1, 30), days_to_anchor=st.integers(1, 27))
def test_every_payment_after_a_trial_is_reminded_once_at_what_the_run_charges(moto_table, trial_days: int,
                                                                             days_to_anchor: int) -> None:
    # The payment day falls ``days_to_anchor`` days after the first charge: a first period
    # of that many days (shorter than the reminder's 7 days before, or not), or a month.
    payment_day = min((MADE + timedelta(days=trial_days + days_to_anchor)).day, 28)
    sub = trial_with_coupon(payment_day=payment_day, trial_days=trial_days)
    until = MADE + timedelta(days=trial_days + 62)
    reminded = day_by_day(sub, until)
    paid = {date.fromisoformat(day): amount for day, amount in charged(sub).items()}
    assert paid
    # a reminder announces a payment the run makes (or one after the window), once, at its amount
    for day, amounts in reminded.items():
        assert len(amounts) == 1, (day, amounts)
        assert amounts == [as_told(paid[day])] if day in paid else day > until, (day, amounts, paid)
    # and every payment was reminded
    assert set(paid) <= set(reminded)


def test_a_reminder_with_the_tax_added_on_top_says_what_the_run_charges(table) -> None:
    # An Italian seller whose prices exclude VAT: the reminder read from the due index
    # announces the price with its 22 %, as the run charges it, not the price alone.
    prices_exclude_vat()
    access.create_product("NEWS-VAT", "News", 1000, "EUR")
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("vat-reminded@example.com"), sku="NEWS-VAT", product_name="News", payment_day=20,
            amount=1000, currency="EUR", card=card(), today=MADE, actor="customer").sub
    reminded = day_by_day(sub, date(2027, 4, 25))
    paid = charged(sub)
    assert paid["2027-03-20"] == paid["2027-04-20"] == 1220  # €10.00 and its 22 %
    assert dict(reminded) == {date(2027, 3, 20): [format_with_symbol(1220, "EUR")],
                              date(2027, 4, 20): [format_with_symbol(1220, "EUR")]}


# --- the switch e-mail after a downgrade: the next run's charge, coupon included ---------------


def test_the_downgrade_e_mail_says_what_the_next_run_charges_with_a_forever_coupon(table) -> None:
    access.create_product("TEA-PLUS", "Tea Plus", 2000, "JPY")
    access.create_product("TEA-LITE", "Tea Lite", 1250, "JPY")
    access.create_coupon("TEA500", actor="staff", amount_off=500, currency="JPY", duration="forever")
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("tea@example.com"), sku="TEA-PLUS", product_name="Tea Plus", payment_day=10,
            amount=2000, currency="JPY", card=card(), today=MADE, actor="customer",
            coupon=access.get_coupon("TEA500")).sub
    mail.outbox.clear()
    mid = date(2027, 3, 20)
    with at(mid):
        done = switch.switch(fresh(sub), "TEA-LITE", today=mid, actor="customer")
    assert not done.quote.upgrade
    [message] = mail.outbox
    assert message.subject == "Your subscription now: Tea Lite"
    with at(date(2027, 4, 10)):
        assert batches.run_payments(run_date=date(2027, 4, 10), workers=1).counts["paid"] == 1
    taken = charged(sub)["2027-04-10"]
    assert taken == 750  # 1,250 less the coupon's 500, for ever
    for text in (message.body, message.alternatives[0][0]):
        assert f"Your next payment, on 10 April 2027, is {format_with_symbol(taken, 'JPY')}." in text
        assert "1,250" not in text  # the list price, which is not what is charged


def test_the_switch_e_mail_s_next_payment_is_the_amount_take_payment_charges_with_tax_added(table) -> None:
    prices_exclude_vat()
    access.create_product("NEWS", "News", 1000, "EUR")
    access.create_product("NEWS-LITE", "News Lite", 500, "EUR")
    access.create_coupon("HALF", actor="staff", percent_off=50, duration="forever")
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("vat@example.com"), sku="NEWS", product_name="News", payment_day=10, amount=1000,
            currency="EUR", card=card(), today=MADE, actor="customer", coupon=access.get_coupon("HALF")).sub
    mail.outbox.clear()
    with at(date(2027, 3, 20)):
        switch.switch(fresh(sub), "NEWS-LITE", today=date(2027, 3, 20), actor="customer")
        announced = payments.owed_amount(fresh(sub))
    [message] = mail.outbox
    with at(date(2027, 4, 10)):
        batches.run_payments(run_date=date(2027, 4, 10), workers=1)
    taken = charged(sub)["2027-04-10"]
    assert taken == announced
    assert f"is {format_with_symbol(taken, 'EUR')}." in message.body


# --- a switch's charge sends its invoice, as every charge does ---------------------------------


def test_an_upgrade_charge_sends_its_invoice_e_mail_as_a_renewal_does(table) -> None:
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 2000, "USD")
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("up@example.com"), sku="NEWS", product_name="News", payment_day=10, amount=1000,
            currency="USD", card=card(), today=MADE, actor="customer").sub
    mail.outbox.clear()
    mid = date(2027, 3, 25)
    with at(mid):
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=mid, actor="customer")
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    assert invoice.subject == str(payments.receipt_subject(receipt))
    assert receipt.Number in invoice.body and f"/receipts/{receipt.url_id}/" in invoice.body
    [charge] = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    assert charge["amount"] == done.charged == receipt.ProcessedAmount
    assert f"Amount:       {as_told(charge['amount'])}" in invoice.body
    assert "Pays for:     25 March 2027 to 9 April 2027" in invoice.body
    assert "Your next payment is due on 10 April 2027." in invoice.body


# --- a payment a coupon takes whole: an invoice of 0, paid, nothing charged ---------------------


def test_a_payment_a_coupon_takes_whole_is_an_invoice_of_0_paid_with_no_charge(table) -> None:
    access.create_product("GYM", "City Gym", 4500, "USD")
    access.create_coupon("FREE", actor="staff", percent_off=100, duration="once")
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account("free@example.com"), sku="GYM", product_name="City Gym", payment_day=10,
            amount=4500, currency="USD", card=card(), today=MADE, actor="customer", coupon=access.get_coupon("FREE"))
    assert started.outcome.amount == 0 and get_gateway().charges_made(sub_id=started.sub.sub_id) == []
    [receipt] = receipts_of(started.sub)
    assert (receipt.ProcessedAmount, receipt.ChargeId, receipt.Status, receipt.DiscountAmount) == (0, None, "paid",
                                                                                                  4500)
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    for text in (invoice.body, invoice.alternatives[0][0]):
        assert "Nothing was charged for" in text and "its invoice is paid" in text
        assert "we received your payment" not in text and "Visa ending 4242" not in text
    assert "Amount:       $0.00" in invoice.body


# --- the cancel page of a trial: nothing paid, nothing refunded; "now" says its refund ----------


@pytest.mark.django_db
def test_a_trial_s_cancel_page_says_nothing_was_paid_and_offers_no_refund(customer) -> None:
    access.create_product("TRIAL-GYM", "Trial Gym", 4500, "GBP", trial_days=14)
    with at(MADE):
        sub = subscribing.subscribe(
            access.get_account(customer.account_id), sku="TRIAL-GYM", product_name="Trial Gym", payment_day=10,
            amount=4500, currency="GBP", card=card(), today=MADE, actor="customer", trial_days=14).sub
    day = MADE + timedelta(days=3)
    with at(day):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/cancel/").content.decode()
        assert lifecycle.refund_if_cancelled_now(fresh(sub), day) == 0
        assert "You have paid up to" not in page and "refunded to your card" not in page
        assert "Your free trial runs until 23 March 2027: nothing has been paid" in page
        assert "At the end of your free trial: it runs until 23 March 2027" in page
        assert "Now: it ends today. Nothing is refunded, and nothing more is charged." in page
        done = customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {
            "when": "now", "reason": "other", "version": fresh(sub).Version}, follow=True)
    assert done.status_code == 200
    assert all(not r.RefundedAmount for r in receipts_of(sub)) and not receipts_of(sub)


@pytest.mark.django_db
def test_the_cancel_page_shows_the_refund_cancel_now_then_makes(customer) -> None:
    with at(MADE):
        sub = subscribing.subscribe(
            access.get_account(customer.account_id), sku="GYM", product_name="City Gym", payment_day=10,
            amount=4500, currency="GBP", card=card(), today=MADE, actor="customer").sub
    day = date(2027, 3, 24)
    with at(day):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/cancel/").content.decode()
        shown = re.search(r"Now: it ends today, and (\S+) is refunded to your card", page)
        assert shown, page
        done = lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="other")
    [receipt] = receipts_of(sub)
    assert done.refunded == receipt.RefundedAmount > 0
    assert shown[1] == format_with_symbol(done.refunded, "GBP")


def test_a_cancel_at_the_end_of_a_trial_e_mail_says_nothing_was_charged(table) -> None:
    access.create_product("TRIAL-GYM", "Trial Gym", 4500, "GBP", trial_days=14)
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("end@example.com"), sku="TRIAL-GYM", product_name="Trial Gym", payment_day=10,
            amount=4500, currency="GBP", card=card(), today=MADE, actor="customer", trial_days=14).sub
    mail.outbox.clear()
    with at(MADE + timedelta(days=2)):
        lifecycle.cancel_at_period_end(fresh(sub), today=MADE + timedelta(days=2), actor="customer", reason="other")
    [message] = mail.outbox
    for text in (message.body, message.alternatives[0][0]):
        assert "Your free trial runs until the end of 23 March 2027, then it ends: nothing has been charged." in text
        assert "You have paid for it up to" not in text


def test_staff_ending_a_trial_e_mails_that_nothing_was_charged(table) -> None:
    from billing.models import AuditAction

    access.create_product("TRIAL-GYM", "Trial Gym", 4500, "GBP", trial_days=14)
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("staff-end@example.com"), sku="TRIAL-GYM", product_name="Trial Gym",
            payment_day=10, amount=4500, currency="GBP", card=card(), today=MADE, actor="customer",
            trial_days=14).sub
    mail.outbox.clear()
    with at(MADE + timedelta(days=2)):
        subscribing.cancel(fresh(sub), actor="staff", reason="staff", action=AuditAction.STAFF_CANCEL)
    [message] = mail.outbox
    for text in (message.body, message.alternatives[0][0]):
        assert "Your free trial runs until the end of 23 March 2027, then it ends: nothing has been charged." in text
        assert "You have paid for it up to" not in text
