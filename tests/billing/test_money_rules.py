"""The money rules M1-M4 (docs/MONEY.md), one test per defect that each fails
on the code before it: no free days, no orphaned charge, nothing taken early.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.models import SubscriptionStatus
from billing.operations import payments
from billing.rules.schedule import period_amount, prorate, retry_after
from core.payments.gateway import get_gateway
from tests.builders import DECLINED_NUMBER, card, fresh, make_account, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])


def at(day: date, hour: int = 6):
    return time_machine.travel(datetime(day.year, day.month, day.day, hour, tzinfo=UTC), tick=False)


def start(day: date, payment_day: int, *, number: str = "4242424242424242", price: int = 999):
    """A subscription made through the portal's own operation on ``day`` (first period paid)."""
    with at(day):
        started = actions.subscribe(make_account(), sku="NEWS-DAILY", product_name="Daily News",
                                    payment_day=payment_day, amount=price, currency="USD", card=card(number),
                                    today=day, actor="pat@example.com")
    return started


def pay(day: date, **options) -> batches.RunSummary:
    with at(day):
        return batches.run_payments(run_date=day, workers=1, catch_up_days=0, **options)


def charged(sub) -> int:
    return sum(c["amount"] for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["status"] == "succeeded")


def days(first: date, last: date):
    return (first + timedelta(days=n) for n in range((last - first).days + 1))


# --- the rounding rule -------------------------------------------------------------------


def test_prorating_is_by_day_rounded_half_up() -> None:
    assert prorate(999, 31, 31) == 999
    assert prorate(999, 5, 31) == 161  # 161.13
    assert prorate(1000, 1, 8) == 125 and prorate(1, 1, 2) == 1  # .5 rounds up
    # 15 Jan to 14 Feb on day 15 is one full month; 10 Jan to 14 Jan is 5 of 31 days
    assert period_amount(999, 15, date(2027, 1, 15), date(2027, 2, 14)) == 999
    assert period_amount(999, 15, date(2027, 1, 10), date(2027, 1, 14)) == 161
    # the prorated days up to a new day plus the month after them
    assert period_amount(999, 20, date(2027, 1, 15), date(2027, 2, 19)) == 161 + 999


# --- defect 8: service starts free ----------------------------------------------------


def test_subscribing_charges_the_days_up_to_the_first_payment_day_at_once(moto_table) -> None:
    started = start(date(2027, 1, 10), 15)
    assert started.started
    sub = fresh(started.sub)
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd, receipt.ProcessedAmount) == ("2027-01-10", "2027-01-14", 161)
    assert (sub.NextPaymentDate, sub.PaidThroughDate) == ("2027-01-15", "2027-01-14")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["idempotency_key"] == f"{sub.sub_id}:2027-01-10"
    assert charge["metadata"]["account_id"] == sub.account_id and charge["metadata"]["period_end"] == "2027-01-14"


def test_subscribing_on_the_payment_day_charges_a_full_month(moto_table) -> None:
    sub = fresh(start(date(2027, 1, 31), 31).sub)
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodEnd, receipt.ProcessedAmount) == ("2027-02-27", 999)
    assert sub.NextPaymentDate == "2027-02-28"


def test_a_declining_card_subscribes_to_nothing(moto_table) -> None:
    started = start(date(2027, 1, 10), 15, number=DECLINED_NUMBER)
    assert not started.started and not fresh(started.sub).is_live
    assert receipts_of(started.sub) == [] and charged(started.sub) == 0


# --- defect 1: payment deferred for ever by changing the day back and forth -----------


def test_changing_the_day_back_and_forth_never_defers_a_payment(moto_table) -> None:
    sub = start(date(2027, 1, 31), 31).sub
    for day in days(date(2027, 2, 1), date(2027, 5, 31)):
        if day.day == 20:  # 31 -> 15 -> 31 every month
            for new_day in (15, 31):
                actions.change_payment_day(fresh(sub), new_day, actor="pat@example.com")
        pay(day)
        # paid in advance: never a day of service unpaid
        assert fresh(sub).PaidThroughDate >= day.isoformat(), day
    receipts = sorted(receipts_of(sub), key=lambda r: r.BillingDate)
    assert [r.BillingDate for r in receipts] == ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"]
    # contiguous: each period starts the day after the previous one ends
    for before, after in zip(receipts, receipts[1:], strict=False):
        assert date.fromisoformat(before.PeriodEnd) + timedelta(days=1) == date.fromisoformat(after.PeriodStart)
    assert charged(sub) == 5 * 999


def test_a_changed_day_is_prorated_on_the_next_payment(moto_table) -> None:
    sub = start(date(2027, 1, 15), 15).sub  # paid 15 Jan - 14 Feb
    with at(date(2027, 1, 20)):
        actions.change_payment_day(fresh(sub), 20, actor="pat@example.com")
    after = fresh(sub)
    assert (after.NextPaymentDate, after.PaidThroughDate) == ("2027-02-15", "2027-02-14")  # no day granted
    pay(date(2027, 2, 15))
    receipt = max(receipts_of(sub), key=lambda r: r.BillingDate)
    # 15-19 Feb is 5 of the 31 days from 20 Jan to 19 Feb, then 20 Feb - 19 Mar in full
    assert (receipt.PeriodStart, receipt.PeriodEnd) == ("2027-02-15", "2027-03-19")
    assert receipt.ProcessedAmount == period_amount(999, 20, date(2027, 2, 15), date(2027, 3, 19)) == 161 + 999
    assert fresh(sub).NextPaymentDate == "2027-03-20"
    events = [e.Action for e in access.get_events_by_account(sub.account_id)]
    assert "subscription.payment_day_changed" in events
    assert any(m.subject.startswith("Payment day changed") for m in mail.outbox)


# --- defect 2: a declined period is forgiven by changing the day ----------------------


def test_a_past_due_period_stays_owed_through_a_change_of_day(moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
    [sub] = seed_due(1, due=date(2027, 1, 15), number=DECLINED_NUMBER)
    pay(date(2027, 1, 15))
    owed = fresh(sub)
    assert owed.Status == SubscriptionStatus.PAST_DUE
    with at(date(2027, 1, 15)):
        actions.change_payment_day(owed, 3, actor="pat@example.com")
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount) == (owed.Status, owed.BillingPeriod, owed.RetryCount)
    assert after.NextPaymentDate == owed.NextPaymentDate and after.PaidThroughDate == "2027-01-14"
    # a new card pays the owed period at once, from its first day to the new day's anchor
    # at least 28 days on (15-31 Jan prorated, then 3 Feb - 2 Mar in full)
    with at(date(2027, 1, 15)):
        outcome = actions.replace_card(fresh(sub), card(), actor="pat@example.com", today=date(2027, 1, 15))
    assert outcome is not None and outcome.status == "paid"
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd) == ("2027-01-15", "2027-03-02")
    assert receipt.ProcessedAmount == period_amount(999, 3, date(2027, 1, 15), date(2027, 3, 2))
    assert fresh(sub).Status == SubscriptionStatus.ACTIVE and fresh(sub).PaidThroughDate == "2027-03-02"


# --- defect 3: an orphaned charge --------------------------------------------------------


def test_a_charge_whose_subscription_was_cancelled_meanwhile_gets_its_receipt(moto_table, monkeypatch) -> None:
    [sub] = seed_due(1, due=date(2027, 3, 15))

    def engine_down(*args, **kwargs):
        raise RuntimeError("DynamoDB unreachable")

    with monkeypatch.context() as patch:
        patch.setattr(access, "create_receipt", engine_down)
        assert pay(date(2027, 3, 15)).counts["errors"] == 1  # charged, not recorded
    with at(date(2027, 3, 15)):
        actions.cancel(fresh(sub), actor="pat@example.com")
    # The re-run no longer sees it; told not to reconcile (the run's own reconciliation
    # would record it: tests/billing/test_janitor.py), it leaves it to the command below.
    assert pay(date(2027, 3, 15), reconcile=False).counts["processed"] == 0
    assert receipts_of(sub) == [] and charged(sub) == 999

    out = StringIO()
    with at(date(2027, 3, 16)), pytest.raises(CommandError, match="1 difference"):
        call_command("reconcile_payments", "--from", "2027-03-15", "--to", "2027-03-16", stdout=out)
    [line, summary] = out.getvalue().splitlines()
    assert line.startswith("missing receipt: charge ch_sim_") and sub.sub_id in line and "9.99 USD" in line
    assert "dry run" in summary and receipts_of(sub) == []

    out = StringIO()
    with at(date(2027, 3, 16)):
        call_command("reconcile_payments", "--from", "2027-03-15", "--to", "2027-03-16", "--fix", stdout=out)
    assert out.getvalue().splitlines()[0].endswith("(fixed)")
    [receipt] = receipts_of(sub)
    assert (receipt.PeriodStart, receipt.PeriodEnd, receipt.ProcessedAmount) == ("2027-03-15", "2027-04-14", 999)
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.CANCELLED and after.PaidThroughDate == "2027-04-14"  # paid, served
    out = StringIO()
    with at(date(2027, 3, 16)):
        call_command("reconcile_payments", "--from", "2027-03-15", "--to", "2027-03-16", stdout=out)
    assert out.getvalue().splitlines() == ["reconciled 2027-03-15..2027-03-16: 1 charge(s), 0 difference(s), "
                                           "0 fixed (dry run: --fix to write)"]


def test_a_charge_returning_after_a_cancel_is_recorded_at_once(moto_table) -> None:
    [sub] = seed_due(1, due=date(2027, 3, 15))
    read_by_the_run = fresh(sub)
    with at(date(2027, 3, 15)):
        actions.cancel(fresh(sub), actor="pat@example.com")  # while the charge is in flight
        outcome = payments.take_payment(read_by_the_run, run_date=date(2027, 3, 15))
    assert outcome.status == "paid" and "paid after cancel" in outcome.reason
    assert [r.PeriodEnd for r in receipts_of(sub)] == ["2027-04-14"]
    assert fresh(sub).PaidThroughDate == "2027-04-14" and not fresh(sub).is_live


# --- defect 4: a price the customer never saw ----------------------------------------


QUOTE = re.compile(r'name="quote" value="([^"]+)"')


@pytest.mark.django_db
def test_a_price_changed_after_the_confirm_page_is_confirmed_again(customer) -> None:
    data = {"product": "NEWS-DAILY", "payment_day": "15", "card_number": "4242 4242 4242 4242",
            "exp_month": "12", "exp_year": "2030", "cvc": "123", "billing_country": "US"}
    customer.client.post("/subscribe/", data)
    page = customer.client.get("/subscribe/confirm/")
    assert "$9.99 every month" in page.content.decode()
    seen = QUOTE.search(page.content.decode())[1]
    access.update_product("NEWS-DAILY", name="Daily News", amount=9999, currency="USD")  # staff, meanwhile

    again = customer.client.post("/subscribe/confirm/", {"quote": seen})
    assert again.status_code == 409
    html = again.content.decode()
    assert "$99.99 every month" in html and "changed from $9.99 to $99.99" in html
    assert access.get_subscriptions_by_account(customer.account_id) == []  # nothing subscribed, nothing charged
    assert get_gateway().charges_made() == []

    new_quote = QUOTE.search(html)[1]
    done = customer.client.post("/subscribe/confirm/", {"quote": new_quote})
    assert done.status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.PaymentAmount == 9999


@pytest.mark.django_db
def test_a_tampered_quote_subscribes_to_nothing(customer) -> None:
    data = {"product": "NEWS-DAILY", "payment_day": "15", "card_number": "4242 4242 4242 4242",
            "exp_month": "12", "exp_year": "2030", "cvc": "123", "billing_country": "US"}
    customer.client.post("/subscribe/", data)
    seen = QUOTE.search(customer.client.get("/subscribe/confirm/").content.decode())[1]
    payload, signature = seen.split(":", 1)
    forged = payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB") + ":" + signature
    assert customer.client.post("/subscribe/confirm/", {"quote": forged}).status_code == 409
    assert access.get_subscriptions_by_account(customer.account_id) == []


# --- defect 5: charged early ---------------------------------------------------------


def test_a_batch_refuses_a_date_after_today(moto_table) -> None:
    seed_due(1, due=date(2027, 3, 18))
    for name in ("process_payments", "send_reminders"):
        with at(date(2027, 3, 15)), pytest.raises(CommandError) as refused:
            call_command(name, "--date", "2027-03-18", stdout=StringIO())
        assert str(refused.value) == ("--date 2027-03-18 is after today (2027-03-15 in UTC): "
                                      "a batch never runs ahead of the clock")
    assert get_gateway().charges_made() == []


# --- defect 6: dunning squeezed --------------------------------------------------------


def test_a_catch_up_run_after_an_outage_charges_a_declining_card_once(moto_table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
    with at(date(2027, 1, 14)):
        batches.run_payments(run_date=date(2027, 1, 14))
    [sub] = seed_due(1, due=date(2027, 1, 15), number=DECLINED_NUMBER)
    with at(date(2027, 1, 20)):  # five days of outage, then one catch-up run
        summary = batches.run_payments(run_date=date(2027, 1, 20))
    assert summary.dates[0] == date(2027, 1, 15) and summary.counts["declined"] == 1
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1
    assert [m.subject.split(":")[0] for m in mail.outbox] == ["Payment declined"]
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.PAST_DUE and after.NextPaymentDate == "2027-01-21"


def test_retries_count_from_the_run_date() -> None:
    run = date(2027, 1, 20)
    assert [retry_after(run, [1, 3, 5], n) for n in range(4)] == [
        date(2027, 1, 21), date(2027, 1, 22), date(2027, 1, 22), None]
    assert retry_after(run, [0], 0) is None  # no positive retry day: no retry
