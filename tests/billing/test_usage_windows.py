"""Consecutive payments bill consecutive days of usage (docs/USAGE.md "Billing a period"):
each payment closes every day before its period, so its usage window must start where the
last one ended, or the days between are closed and never billed. A regular renewal's
window is the month before it; after a change of payment day (a longer period), a pause
or a cancel it is still the days since the last payment's period began."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing import access, batches
from billing.access.usage import UsageEvent, get_meter, record_event
from billing.access.usage_billing import attach_metered_price
from billing.actions import lifecycle
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.actions.subscriptions import change_payment_day
from billing.models import MeterAggregation, Subscription, UsageEndEntry
from billing.operations import payments
from billing.rules.pricing import PriceTerms
from core.payments.gateway import get_gateway
from tests.builders import DECLINED_NUMBER, card, fresh, make_account, make_subscription, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

START = date(2027, 2, 15)


def _metered_sub():
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(1)), actor="test",
                                    nickname="a cent a call", meter="api_calls")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=START)
    sub = access.set_schedule(sub, next_payment=date(2027, 3, 15), last_payment=START,
                              next_reminder=date(2027, 3, 8), last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price.PriceId, actor="test")


def _use_one(sub, day: date) -> None:
    """One call on ``day``, sent that day."""
    at = datetime(day.year, day.month, day.day, 10, tzinfo=UTC)
    event = UsageEvent(sub.account_id, f"call-{day.isoformat()}", Decimal(1), int(at.timestamp()), day.isoformat())
    record_event(get_meter("api_calls"), event, now=at)


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _live_through(sub, last: date, *, on_day=None) -> None:
    """A call a day and the payments due, day after day; ``on_day(day)`` acts after them."""
    for day in _days(START, last):
        with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
            current = fresh(sub)
            if current.NextPaymentDate == day.isoformat():
                outcome = payments.take_payment(current, run_date=day)
                assert outcome.status == "paid", (day, outcome.reason)
            _use_one(sub, day)
            if on_day is not None:
                on_day(day)


def _billed_days(sub) -> Counter[date]:
    """How many times each day's usage was billed, from the receipts' usage windows."""
    billed: Counter[date] = Counter()
    for receipt in receipts_of(sub):
        if receipt.UsageStart:
            billed.update(_days(date.fromisoformat(receipt.UsageStart),
                                date.fromisoformat(receipt.UsageEnd) - timedelta(days=1)))
            assert receipt.UsageQuantity == (date.fromisoformat(receipt.UsageEnd)
                                             - date.fromisoformat(receipt.UsageStart)).days
    return billed


def test_after_a_change_of_payment_day_the_days_before_the_new_day_are_billed_once(moto_table) -> None:
    sub = _metered_sub()

    def act(day: date) -> None:
        if day == date(2027, 3, 16):  # paid to 14 April; the next period then runs 15 April - 19 May
            change_payment_day(fresh(sub), 20, actor="customer")

    _live_through(sub, date(2027, 5, 20), on_day=act)
    assert fresh(sub).NextPaymentDate == "2027-06-20"
    billed = _billed_days(sub)
    # Every day from the start to 19 May billed exactly once (15-19 April too: they were
    # closed by the payment of 20 May and used to be in no window).
    assert billed == Counter(_days(START, date(2027, 5, 19)))


def test_a_cancel_bills_the_days_since_the_last_payment_and_no_day_twice(moto_table) -> None:
    sub = _metered_sub()

    def act(day: date) -> None:
        if day == date(2027, 4, 20):
            lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="too_expensive")

    _live_through(sub, date(2027, 4, 20), on_day=act)
    billed = _billed_days(sub)
    assert billed == Counter(_days(START, date(2027, 4, 20)))
    [final] = [r for r in receipts_of(sub) if r.Kind == "usage"]
    assert (final.UsageStart, final.UsageEnd) == ("2027-04-15", "2027-04-21")
    with time_machine.travel(datetime(2027, 4, 21, 12, tzinfo=UTC), tick=False):
        summary = batches.run_payments(run_date=date(2027, 4, 21), workers=1, catch_up_days=0)
    assert summary.counts["differences"] == 0, summary.differences


@pytest.mark.parametrize("resume_on", [date(2027, 4, 1), date(2027, 4, 25)])
def test_usage_during_a_pause_is_billed_with_the_first_payment_after_it(moto_table, resume_on: date) -> None:
    sub = _metered_sub()

    def act(day: date) -> None:
        if day == date(2027, 3, 20):
            lifecycle.pause(fresh(sub), resume=None, today=day, actor="customer")
        if day == resume_on:
            lifecycle.resume(fresh(sub), today=day, actor="customer")

    _live_through(sub, date(2027, 6, 1), on_day=act)
    billed = _billed_days(sub)
    assert set(billed.values()) == {1}, "a day billed twice"
    last_closed = max(billed)
    # No gap: every day from the start to the last day a payment closed is billed.
    assert sorted(billed) == _days(START, last_closed)
    assert last_closed >= date(2027, 5, 14)


def test_a_cancel_during_a_free_trial_bills_no_usage(moto_table) -> None:
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(1)), actor="test",
                                    nickname="a cent a call", meter="api_calls")
    with time_machine.travel(datetime(2027, 2, 15, 12, tzinfo=UTC), tick=False):
        started = subscribing.subscribe(access.create_account("trial@example.com"), sku="API",
                                        product_name="Developer API", payment_day=15, amount=999, currency="USD",
                                        card=card(), today=START, actor="customer", trial_days=14)
        sub = attach_metered_price(fresh(started.sub), price.PriceId, actor="test")
    for day in _days(START, date(2027, 2, 20)):
        with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
            _use_one(sub, day)
    with time_machine.travel(datetime(2027, 2, 20, 12, tzinfo=UTC), tick=False):
        lifecycle.cancel_now(fresh(sub), today=date(2027, 2, 20), actor="customer", reason="too_expensive")
    assert receipts_of(sub) == [] and get_gateway().charges_made(sub_id=sub.sub_id) == []


def _ending_entries() -> list:
    return list(UsageEndEntry.query(UsageEndEntry.pk()))


def test_a_cancel_at_period_end_has_its_last_period_s_usage_billed_by_the_next_run_once(moto_table) -> None:
    sub = _metered_sub()

    def act(day: date) -> None:
        if day == date(2027, 4, 2):  # paid 15 March to 14 April: served to then
            lifecycle.cancel_at_period_end(fresh(sub), today=day, actor="customer", reason="too_expensive")
            [entry] = _ending_entries()
            assert (entry.SubId, entry.LastDay) == (sub.sub_id, "2027-04-14")

    _live_through(sub, date(2027, 4, 14), on_day=act)
    assert [r for r in receipts_of(sub) if r.Kind == "usage"] == []  # not before the period ends
    with time_machine.travel(datetime(2027, 4, 15, 12, tzinfo=UTC), tick=False):
        first = batches.run_payments(run_date=date(2027, 4, 15), workers=1, catch_up_days=0)
        again = batches.run_payments(run_date=date(2027, 4, 15), workers=1, catch_up_days=0)  # a re-run
    assert (first.counts["usage_billed"], again.counts["usage_billed"]) == (1, 0)
    # the reconciliation finds the usage charge's own receipt (not the period's of its first day)
    assert first.counts["differences"] == again.counts["differences"] == 0, first.differences + again.differences
    assert first.as_dict()["usage_billed"] == 1 and "usage billed 1" in first.line()
    [final] = [r for r in receipts_of(sub) if r.Kind == "usage"]
    assert (final.UsageStart, final.UsageEnd, final.UsageQuantity) == ("2027-03-15", "2027-04-15", 31)
    assert _billed_days(sub) == Counter(_days(START, date(2027, 4, 14)))
    usage_charges = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "usage"]
    assert len(usage_charges) == 1 and _ending_entries() == []


@pytest.mark.parametrize("then", ["keep", "cancel now"])
def test_a_cancel_at_period_end_undone_or_made_now_leaves_nothing_for_the_run_to_bill(moto_table, then: str) -> None:
    sub = _metered_sub()

    def act(day: date) -> None:
        if day == date(2027, 4, 2):
            lifecycle.cancel_at_period_end(fresh(sub), today=day, actor="customer", reason="too_expensive")
        if day == date(2027, 4, 10):
            if then == "keep":
                lifecycle.keep(fresh(sub), today=day, actor="customer")
            else:
                lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="too_expensive")

    _live_through(sub, date(2027, 4, 15), on_day=act)  # the 15th's run, kept: the renewal bills the usage
    with time_machine.travel(datetime(2027, 4, 15, 13, tzinfo=UTC), tick=False):
        summary = batches.run_payments(run_date=date(2027, 4, 15), workers=1, catch_up_days=0)
    assert summary.counts["usage_billed"] == 0 and _ending_entries() == []
    last = date(2027, 4, 14) if then == "keep" else date(2027, 4, 10)
    assert _billed_days(sub) == Counter(_days(START, last))


def _usage_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "usage"]


def _run(day: date):
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        return batches.run_payments(run_date=day, workers=1, catch_up_days=0)


def _cancel_now_on_a_declining_card(cancel_on: date):
    sub = _metered_sub()
    _live_through(sub, cancel_on - timedelta(days=1))
    declining = card(DECLINED_NUMBER)
    fresh(sub).update(actions=[Subscription.PaymentDetails.Token.set(declining.token)])
    with time_machine.travel(datetime(cancel_on.year, cancel_on.month, cancel_on.day, 12, tzinfo=UTC), tick=False):
        lifecycle.cancel_now(fresh(sub), today=cancel_on, actor="customer", reason="too_expensive")
    return sub


def test_a_declined_usage_charge_at_a_cancel_is_retried_under_a_key_of_its_own_until_paid(moto_table) -> None:
    sub = _cancel_now_on_a_declining_card(date(2027, 4, 20))  # a call a day 15-19 April: 5
    [entry] = _ending_entries()
    assert (entry.Attempts, entry.SK.split("#")[0]) == (1, "2027-04-21")  # PAYMENT_RETRY_DAYS' first gap
    declined = _run(date(2027, 4, 21))
    assert (declined.counts["usage_declined"], declined.counts["usage_billed"]) == (1, 0)
    assert "usage declined 1" in declined.line() and declined.as_dict()["usage_declined"] == 1
    [entry] = _ending_entries()
    assert (entry.Attempts, entry.SK.split("#")[0]) == (2, "2027-04-23")
    fresh(sub).update(actions=[Subscription.PaymentDetails.Token.set(card().token)])  # funds again
    assert _run(date(2027, 4, 22)).counts["usage_billed"] == 0  # not due yet
    paid = _run(date(2027, 4, 23))
    assert paid.counts["usage_billed"] == 1 and paid.counts["differences"] == 0, paid.differences
    assert _run(date(2027, 4, 24)).counts["usage_billed"] == 0 and _ending_entries() == []
    keys = [(c["idempotency_key"].split(":")[-1], c["status"]) for c in _usage_charges(sub)]
    assert keys == [("2027-04-15", "declined"), ("retry1", "declined"), ("retry2", "succeeded")]
    [final] = [r for r in receipts_of(sub) if r.Kind == "usage"]
    assert (final.UsageStart, final.UsageEnd, final.UsageQuantity) == ("2027-04-15", "2027-04-21", 5)


def test_a_usage_charge_declined_on_every_retry_is_given_up_after_the_last(moto_table) -> None:
    sub = _cancel_now_on_a_declining_card(date(2027, 4, 20))
    for day in _days(date(2027, 4, 21), date(2027, 4, 30)):
        _run(day)
    assert _ending_entries() == [] and [r for r in receipts_of(sub) if r.Kind == "usage"] == []
    # the cancel's own attempt and one a PAYMENT_RETRY_DAYS entry (1, 3, 5): four, each its own key
    assert len({c["idempotency_key"] for c in _usage_charges(sub)}) == len(_usage_charges(sub)) == 4
