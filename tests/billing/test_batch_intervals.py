"""Cadences through the engine: a yearly, a two-weekly and a quarterly subscription
charged, reminded, caught up, paused and resumed by the batches' own functions
(docs/MONEY.md "Cadences")."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from billing import access, batches
from billing.actions import lifecycle as lifecycle_actions
from billing.batches.outcomes import ReminderStatus
from billing.exceptions import PauseRefused
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.lifecycle import pause_end
from billing.rules.schedule import cadence_of, prorate
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, make_account, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

LEAP_DAY = date(2028, 2, 29)
ANNIVERSARIES = [date(2029, 2, 28), date(2030, 2, 28), date(2031, 2, 28), date(2032, 2, 29)]


def on(day: date) -> time_machine.travel:
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def subscribed(today: date, *, day: int, interval: str, count: int = 1, amount: int = 12000):
    """Made and its first charge taken at subscribing, as the subscribe page does."""
    with on(today):
        sub = access.create_subscription(make_account(), sku="NEWS-DAILY", payment_day=day, amount=amount,
                                         currency="USD", card=card(), today=today, reminder_days_before=7,
                                         product_name="Daily News", interval=interval, interval_count=count)
        assert payments.take_first_payment(sub, today=today).status == PaymentStatus.PAID
    return fresh(sub)


def charged_periods(sub) -> list[tuple[str, str, int]]:
    made = [c for c in get_gateway().charges_made() if c["metadata"]["sub_id"] == sub.sub_id]
    return sorted((c["metadata"]["period_start"], c["metadata"]["period_end"], c["amount"]) for c in made)


class Runs:
    """Both batches run on chosen days; the catch-up covers the days between."""

    def __init__(self) -> None:
        self.covered: set[date] = set()
        self.paid: list[tuple[date, date]] = []  # (run day, period's first day)
        self.reminded: list[date] = []  # the payment each sent reminder announced

    def day(self, day: date) -> None:
        with on(day):
            summary = batches.run_payments(run_date=day, workers=1, on_item=self._paid(day))
            batches.run_reminders(run_date=day, workers=1, on_item=self._reminded)
        assert summary.ok
        self.covered.update(summary.dates)

    def _paid(self, day: date):
        def seen(outcome) -> None:
            if outcome.status == PaymentStatus.PAID:
                self.paid.append((day, outcome.period))
        return seen

    def _reminded(self, outcome) -> None:
        if outcome.status == ReminderStatus.SENT:
            self.reminded.append(outcome.payment_date)


def test_a_yearly_29_february_is_charged_and_reminded_once_each_anniversary(moto_table) -> None:
    sub = subscribed(LEAP_DAY, day=29, interval="year")
    assert (sub.Interval, sub.IntervalCount, sub.IntervalAnchor) == ("year", 1, "2028-02-29")
    assert sub.NextPaymentDate == "2029-02-28" and sub.PaidThroughDate == "2029-02-27"
    runs = Runs()
    day = LEAP_DAY + timedelta(days=1)
    while day <= date(2032, 3, 3):
        runs.day(day)
        # every day near an anniversary, else every 30 days:
        # the runs' catch-up takes the days between
        near = any(a - timedelta(days=9) <= day <= a + timedelta(days=2) for a in ANNIVERSARIES)
        day += timedelta(days=1 if near else 30)
    first_day, last_day = LEAP_DAY + timedelta(days=1), date(2032, 3, 3)
    assert {first_day + timedelta(days=n) for n in range((last_day - first_day).days + 1)} <= runs.covered
    # charged on each anniversary, on the day, once; skipped every other day
    assert runs.paid == [(a, a) for a in ANNIVERSARIES]
    assert Counter(runs.reminded) == Counter(ANNIVERSARIES)
    assert charged_periods(sub) == [
        ("2028-02-29", "2029-02-27", 12000), ("2029-02-28", "2030-02-27", 12000),
        ("2030-02-28", "2031-02-27", 12000), ("2031-02-28", "2032-02-28", 12000),
        ("2032-02-29", "2033-02-27", 12000)]
    assert sorted(r.BillingDate for r in receipts_of(sub)) == ["2028-02-29", *(a.isoformat() for a in ANNIVERSARIES)]
    after = fresh(sub)
    # a yearly renewal is announced 30 days ahead (schedule.LONG_PERIOD_REMINDER_DAYS), not 7
    assert (after.NextPaymentDate, after.PaidThroughDate, after.NextReminderDate) == (
        "2033-02-28", "2033-02-27", "2033-01-29")


def test_every_2_weeks_keeps_its_weekday(moto_table) -> None:
    wednesday = date(2027, 3, 3)
    sub = subscribed(wednesday, day=3, interval="week", count=2, amount=700)
    assert sub.NextPaymentDate == "2027-03-17" and sub.IntervalAnchor == "2027-03-03"
    runs = Runs()
    for n in range(1, 23):
        runs.day(wednesday + timedelta(days=3 * n))  # every third day: the catch-up takes the others
    expected = [wednesday + timedelta(days=14 * n) for n in range(1, 5)]
    assert [period for _run, period in runs.paid] == expected
    assert all(d.weekday() == 2 for d in expected)
    assert charged_periods(sub) == [(d.isoformat(), (d + timedelta(days=13)).isoformat(), 700)
                                    for d in [wednesday, *expected]]
    # payments two weeks apart are not announced (docs/MONEY.md "Reminders by cadence"):
    # no e-mail, and the item is out of the reminders' index
    assert runs.reminded == [] and fresh(sub).NextReminderDate is None


def test_every_3_months_on_day_31_catches_up_5_missed_days(moto_table) -> None:
    sub = subscribed(date(2027, 1, 31), day=31, interval="month", count=3, amount=3000)
    assert sub.NextPaymentDate == "2027-04-30"
    runs = Runs()
    runs.day(date(2027, 4, 27))
    # no run from the 28th to 2 May: the 3rd catches them up, the 30 April payment once
    runs.day(date(2027, 5, 3))
    assert runs.paid == [(date(2027, 5, 3), date(2027, 4, 30))]
    runs.day(date(2027, 5, 4))
    runs.day(date(2027, 7, 31))
    assert runs.paid[1:] == [(date(2027, 7, 31), date(2027, 7, 31))]
    assert charged_periods(sub) == [("2027-01-31", "2027-04-29", 3000), ("2027-04-30", "2027-07-30", 3000),
                                    ("2027-07-31", "2027-10-30", 3000)]
    assert fresh(sub).NextPaymentDate == "2027-10-31"


def test_a_yearly_subscription_pauses_for_a_payment_and_resumes(moto_table) -> None:
    sub = subscribed(LEAP_DAY, day=29, interval="year")
    today = date(2028, 6, 1)
    with on(today):
        resume = pause_end(sub, today, payments=1)
        assert resume == date(2030, 2, 28)  # the 2029 payment skipped: due on the next anniversary
        lifecycle_actions.pause(sub, resume=resume, today=today, actor="customer")
    paused = fresh(sub)
    assert (paused.PausedFrom, paused.NextPaymentDate) == ("2029-02-28", "2030-02-28")
    runs = Runs()
    runs.day(date(2029, 2, 28))
    assert runs.paid == []
    with on(date(2029, 3, 10)):
        lifecycle_actions.resume(fresh(sub), today=date(2029, 3, 10), actor="customer")
    # the paid days are over and the next anniversary (or the pause's end) is most of a
    # year away: anchored anew on tomorrow, a full year from then (not 11 months unpaid)
    back = fresh(sub)
    assert (back.NextPaymentDate, back.PaymentDay, back.IntervalAnchor, back.PausedFrom) == (
        "2029-03-11", 11, "2029-03-11", None)
    runs.day(date(2029, 3, 11))
    assert runs.paid == [(date(2029, 3, 11), date(2029, 3, 11))]
    assert charged_periods(sub)[1:] == [("2029-03-11", "2030-03-10", 12000)]
    assert fresh(sub).NextPaymentDate == "2030-03-11"


def test_a_yearly_trial_charges_from_its_end_to_the_anniversary(moto_table) -> None:
    with on(date(2027, 3, 1)):
        sub = access.create_subscription(make_account(), sku="NEWS-DAILY", payment_day=15, amount=36500,
                                         currency="USD", card=card(), today=date(2027, 3, 1), reminder_days_before=7,
                                         trial_days=14, interval="year")
    # the trial's last day is the 14th: the anchor is the first 15th from the 15th, a full year
    assert (sub.TrialEnd, sub.NextPaymentDate, sub.IntervalAnchor) == ("2027-03-14", "2027-03-15", "2027-03-15")
    Runs().day(date(2027, 3, 15))
    assert charged_periods(sub) == [("2027-03-15", "2028-03-14", 36500)]


def test_a_yearly_payment_costs_two_requests(table, ddb_requests) -> None:
    """On moto and on DynamoDB Local: a yearly renewal from the index alone (its cadence is
    projected), two writes per payment as a monthly one."""
    sub = subscribed(LEAP_DAY, day=29, interval="year")
    found = list(access.get_due_payments_by_date(date(2029, 2, 28)))
    assert [s.sub_id for s in found] == [sub.sub_id]
    assert cadence_of(found[0]) == cadence_of(sub)  # GSI-2 projects the cadence
    ddb_requests.reset()
    with on(date(2029, 2, 28)):
        summary = batches.run_payments(run_date=date(2029, 2, 28), workers=1, catch_up_days=0)
    assert summary.counts["paid"] == 1
    ops = ddb_requests.by_name()
    # as test_batch_payments' count: +1 PutItem and +1 UpdateItem for the run's record, +1
    # Query for the expiry of incomplete ones, +1 Query for the usage due of cancels at period
    # end, +1 GetItem for the seller's tax profile
    assert ops == Counter({"PutItem": 1, "TransactWriteItems": 1, "UpdateItem": 2, "Query": 3, "GetItem": 1})
    assert charged_periods(sub)[1:] == [("2029-02-28", "2030-02-27", 12000)]


def test_a_yearly_cancelled_now_after_eight_months_refunds_its_unused_days(moto_table) -> None:
    """The year's receipt outlives RECEIPT_RETENTION_DAYS (200) until its period ends, and the
    cancel reads back two periods: the unused days' share is refunded (M1)."""
    sub = subscribed(LEAP_DAY, day=29, interval="year")
    [receipt] = receipts_of(sub)
    assert receipt.TTL.date() == date(2029, 2, 27)  # its period's last day, not 200 days on
    today = date(2028, 11, 1)
    with on(today):
        done = lifecycle_actions.cancel_now(fresh(sub), today=today, actor="customer", reason="not_using")
    unused = (date(2029, 2, 27) - today).days  # 2 November to 27 February: 118 days of 365
    assert done.refunded == prorate(12000, unused, 365) == 3879 and not done.refund_failures


def test_a_yearly_pause_skips_at_most_a_year(moto_table) -> None:
    sub = subscribed(LEAP_DAY, day=29, interval="year")
    with pytest.raises(PauseRefused, match="at most a year"):
        pause_end(sub, date(2028, 6, 1), payments=2)


def test_every_day_catches_up_each_missed_day_once(moto_table) -> None:
    sub = subscribed(date(2027, 3, 1), day=1, interval="day", amount=100)
    runs = Runs()
    runs.day(date(2027, 3, 2))
    runs.day(date(2027, 3, 7))  # the 3rd to the 6th were never run: each is a day owed, taken once
    days = [date(2027, 3, d) for d in range(2, 8)]
    assert [period for _run, period in runs.paid] == days
    assert charged_periods(sub) == [(d.isoformat(), d.isoformat(), 100) for d in [date(2027, 3, 1), *days]]
    assert fresh(sub).NextPaymentDate == "2027-03-08"


@pytest.mark.django_db
def test_the_staff_upcoming_days_count_each_weekly_payment_in_the_window(moto_table) -> None:
    """A weekly's four or five payments in the 30 days, not the two a month's periods would read."""
    from django.test import Client
    from django.urls import reverse

    from tests.builders import make_user

    sub = subscribed(date(2027, 1, 6), day=6, interval="week", amount=300)
    assert sub.NextPaymentDate == "2027-01-13"
    clerk = make_user("clerk@rpay.localhost", staff=True)
    with on(date(2027, 1, 10)):
        staff = Client()
        staff.force_login(clerk)  # a session of that day
        page = staff.get(reverse("admin:staff_upcoming"))
    chart = page.context["chart"]
    # 13, 20, 27 January, 3 February (day 24 of the window), never more than one a day
    assert sum(chart["payments"]) == 4 and sum(chart["amounts"]["USD"]["values"]) == 1200
