"""Pause, resume, next charge at every kind of cadence (docs/MONEY.md "Pause" and
"Cadences"): monthly, yearly, every 3 months, every 2 weeks. Resumed while paid days are
left, it is due the day after them, a regular period at the full price; resumed after
them, it never serves more than a month's days unpaid (a yearly was due on its next
anniversary, most of a year free); the charge that follows pays a regular period of the
cadence, from an anchor date, at the full price, with nothing prorated."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from billing import access, batches
from billing.actions import lifecycle as lifecycle_actions
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.lifecycle import pause_end
from billing.rules.schedule import cadence_of, is_anchor, next_payment_date
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, make_account

pytestmark = pytest.mark.django_db(databases=[])

START = date(2027, 1, 20)
PRICE = 12000
# (interval, count): the four cadences, each with the days its first period lasts
CADENCES = {"monthly": ("month", 1), "yearly": ("year", 1), "every 3 months": ("month", 3),
            "every 2 weeks": ("week", 2)}
# A monthly resume serves at most 30 unpaid days (the day after an anchor to the next):
# no cadence serves more.
MOST_UNPAID_DAYS = 30


def on(day: date) -> time_machine.travel:
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def subscribed(interval: str, count: int):
    with on(START):
        sub = access.create_subscription(make_account(), sku="NEWS-DAILY", payment_day=START.day, amount=PRICE,
                                         currency="USD", card=card(), today=START, reminder_days_before=7,
                                         product_name="Daily News", interval=interval, interval_count=count)
        assert payments.take_first_payment(sub, today=START).status == PaymentStatus.PAID
    return fresh(sub)


def charges(sub) -> list[tuple[str, str, int]]:
    made = [c for c in get_gateway().charges_made() if c["metadata"]["sub_id"] == sub.sub_id]
    return sorted((c["metadata"]["period_start"], c["metadata"]["period_end"], c["amount"]) for c in made)


def run_on(day: date) -> None:
    with on(day):
        assert batches.run_payments(run_date=day, workers=1).ok


def paused_open(sub, today: date):
    with on(today):
        lifecycle_actions.pause(sub, resume=None, today=today, actor="customer")
    return fresh(sub)


def resumed(sub, today: date):
    with on(today):
        lifecycle_actions.resume(fresh(sub), today=today, actor="customer")
    return fresh(sub)


def assert_a_regular_period_follows(sub, due: date) -> None:
    """The run on ``due`` charges one regular period of the cadence from ``due``, at the
    full price, and moves on to the next date."""
    cadence = cadence_of(sub)
    assert is_anchor(cadence, due)
    before = len(charges(sub))
    run_on(due)
    after = fresh(sub)
    following = next_payment_date(cadence, due)
    assert charges(sub)[before:] == [(due.isoformat(), (following - timedelta(days=1)).isoformat(), PRICE)]
    assert (after.NextPaymentDate, after.PaidThroughDate) == (following.isoformat(),
                                                              (following - timedelta(days=1)).isoformat())


@pytest.mark.parametrize("name", CADENCES)
def test_resumed_while_paid_days_are_left_it_is_due_the_day_after_them(moto_table, name) -> None:
    sub = subscribed(*CADENCES[name])
    paid_through = date.fromisoformat(sub.PaidThroughDate)
    paused = paused_open(sub, START + timedelta(days=3))
    assert (paused.PausedFrom, paused.NextPaymentDate) == ((paid_through + timedelta(days=1)).isoformat(), None)
    back = resumed(sub, START + timedelta(days=6))
    due = paid_through + timedelta(days=1)
    assert (back.NextPaymentDate, back.PaidThroughDate, back.PausedFrom) == (due.isoformat(), sub.PaidThroughDate,
                                                                             None)
    assert_a_regular_period_follows(back, due)


@pytest.mark.parametrize("name", CADENCES)
@pytest.mark.parametrize("late", [1, 20])
def test_resumed_after_the_paid_days_it_serves_at_most_a_month_unpaid(moto_table, name, late) -> None:
    sub = subscribed(*CADENCES[name])
    paid_through = date.fromisoformat(sub.PaidThroughDate)
    paused_open(sub, START + timedelta(days=3))
    today = paid_through + timedelta(days=late)
    run_on(today)  # nothing is due while paused
    back = resumed(sub, today)
    due = date.fromisoformat(back.NextPaymentDate)
    assert today < due and (due - today).days - 1 <= MOST_UNPAID_DAYS
    assert back.PaidThroughDate == sub.PaidThroughDate and back.PausedFrom is None  # the paused days: not charged
    assert back.NextReminderDate is None or back.NextReminderDate <= due.isoformat()
    assert_a_regular_period_follows(back, due)
    assert len(charges(sub)) == 2  # the first period, then the one after the pause: never the paused days


@pytest.mark.parametrize("name", CADENCES)
def test_a_pause_for_one_payment_skips_one_period_then_charges_a_regular_one(moto_table, name) -> None:
    sub = subscribed(*CADENCES[name])
    today = START + timedelta(days=3)
    skipped = date.fromisoformat(sub.NextPaymentDate)
    with on(today):
        resume = pause_end(sub, today, payments=1)
        lifecycle_actions.pause(sub, resume=resume, today=today, actor="customer")
    assert resume == next_payment_date(cadence_of(sub), skipped)
    run_on(skipped)
    assert len(charges(sub)) == 1  # the skipped date charges nothing
    assert_a_regular_period_follows(fresh(sub), resume)
