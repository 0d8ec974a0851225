"""Reminders follow the cadence (docs/MONEY.md "Reminders by cadence"): none for payments
less than a month apart (a daily subscription is not e-mailed every day), 30 days ahead
for a yearly renewal, the configured days for a month or a quarter; the portal's words say the same."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access, batches
from billing.batches.outcomes import ReminderStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.pricing import MAX_INTERVAL_COUNT, Interval
from billing.rules.schedule import (
    LONG_PERIOD_REMINDER_DAYS,
    Cadence,
    reminder_days,
    renewal_reminder,
)
from tests.builders import card, fresh, make_account

pytestmark = pytest.mark.django_db(databases=[])


def on(day: date) -> time_machine.travel:
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def subscribed(today: date, *, interval: str, count: int = 1, trial_days: int = 0):
    with on(today):
        sub = access.create_subscription(make_account(), sku="NEWS-DAILY", payment_day=today.day, amount=500,
                                         currency="USD", card=card(), today=today, reminder_days_before=7,
                                         product_name="Daily News", interval=interval, interval_count=count,
                                         trial_days=trial_days)
        if not trial_days:
            assert payments.take_first_payment(sub, today=today).status == PaymentStatus.PAID
    return fresh(sub)


def run_days(first: date, days: int) -> list[date]:
    """Both batches each day; the payments each sent reminder announced."""
    reminded: list[date] = []

    def seen(outcome) -> None:
        if outcome.status == ReminderStatus.SENT:
            reminded.append(outcome.payment_date)

    for n in range(days):
        day = first + timedelta(days=n)
        with on(day):
            batches.run_payments(run_date=day, workers=1)
            batches.run_reminders(run_date=day, workers=1, on_item=seen)
    return reminded


def test_a_daily_subscription_is_charged_every_day_and_never_reminded(moto_table) -> None:
    start = date(2027, 3, 1)
    sub = subscribed(start, interval="day")
    assert sub.NextReminderDate is None and sub.DueReminderKey is None  # out of GSI-1
    mail.outbox.clear()
    assert run_days(start + timedelta(days=1), 10) == []
    assert not [m for m in mail.outbox if "Upcoming payment" in m.subject]
    after = fresh(sub)
    assert after.NextPaymentDate == "2027-03-12" and after.NextReminderDate is None


def test_a_daily_item_written_with_a_reminder_leaves_the_index_unsent(moto_table) -> None:
    """An item made before reminders followed the cadence still has a reminder date: the
    run claims it (moved out of GSI-1) and sends nothing."""
    start = date(2027, 3, 1)
    sub = subscribed(start, interval="day")
    access.set_schedule(sub, next_payment=date(2027, 3, 2), last_payment=start,
                        next_reminder=date(2027, 3, 2), last_reminder=start)
    mail.outbox.clear()
    with on(date(2027, 3, 2)):
        summary = batches.run_reminders(run_date=date(2027, 3, 2), workers=1)
    assert summary.counts.get("sent", 0) == 0 and not mail.outbox
    assert fresh(sub).NextReminderDate is None


def test_a_weekly_trial_still_announces_its_first_charge_then_no_renewal(moto_table) -> None:
    start = date(2027, 3, 1)
    sub = subscribed(start, interval="week", trial_days=14)
    assert (sub.NextPaymentDate, sub.NextReminderDate) == ("2027-03-15", "2027-03-08")
    assert run_days(date(2027, 3, 2), 28) == [date(2027, 3, 15)]
    assert fresh(sub).NextReminderDate is None


def test_a_yearly_renewal_is_announced_30_days_ahead(moto_table) -> None:
    start = date(2027, 3, 1)
    sub = subscribed(start, interval="year")
    assert (sub.NextPaymentDate, sub.NextReminderDate) == ("2028-03-01", "2028-01-31")
    assert run_days(date(2028, 1, 30), 3) == [date(2028, 3, 1)]


def test_a_monthly_renewal_keeps_the_configured_days(moto_table) -> None:
    start = date(2027, 3, 1)
    sub = subscribed(start, interval="month", count=3)
    assert (sub.NextPaymentDate, sub.NextReminderDate) == ("2027-06-01", "2027-05-25")


@pytest.mark.django_db
def test_the_portal_says_no_reminder_for_a_weekly_and_the_date_for_a_yearly(moto_table) -> None:
    from django.template.loader import render_to_string

    weekly = subscribed(date(2027, 3, 1), interval="week")
    yearly = subscribed(date(2027, 3, 1), interval="year")
    with on(date(2027, 3, 2)):
        weekly_words = render_to_string("portal/_sub_summary.html", {"sub": weekly})
        yearly_words = render_to_string("portal/_sub_summary.html", {"sub": yearly})
    assert "None: your payments are less than a month apart" in weekly_words
    assert "31 Jan 2028" in yearly_words


@settings(max_examples=30, deadline=None)
@given(interval=st.sampled_from(list(Interval)), count=st.integers(1, 36), days_before=st.integers(0, 20),
       payment=st.dates(date(2025, 1, 1), date(2035, 12, 31)), gap=st.integers(1, 400))
def test_a_reminder_falls_between_the_payment_before_and_the_payment(interval, count, days_before, payment,
                                                                     gap) -> None:
    count = min(count, MAX_INTERVAL_COUNT[interval])
    cadence = Cadence(payment.day, interval, count, None if interval == Interval.MONTH and count == 1 else payment)
    today = payment - timedelta(days=gap)
    days = reminder_days(cadence, days_before)
    remind = renewal_reminder(cadence, payment, days_before, today)
    if cadence.min_period_days < 28:
        assert days is None and remind is None
        assert renewal_reminder(cadence, payment, days_before, today, ends_trial=True) is not None
        return
    assert days == (max(days_before, LONG_PERIOD_REMINDER_DAYS) if cadence.months >= 12 else days_before)
    assert remind is not None and min(today + timedelta(days=1), payment) <= remind <= payment
    # never more than one regular period ahead: the payment before has been taken by then
    assert (payment - remind).days < cadence.min_period_days
