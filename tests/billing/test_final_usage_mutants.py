"""The last usage charge of a cancelled subscription (billing/operations/final_usage.py),
pinned where mutation testing found it unpinned: the idempotency key of each attempt, when
a declined charge is tried again and when it is given up (and what the log then says),
which entries the payment run bills or drops, which are announced in advance, and the
charge still to come of a cancel at period end as the upcoming payment shows it.

A subscription of ``_metered`` (half a cent a call, paid 15 February to 14 March 2027)
uses 1,035 calls on 1 March: 518 cents of usage."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access.usage import UsageEvent, get_meter, record_event
from billing.access.usage_billing import usage_end_entry
from billing.actions import lifecycle
from billing.models import Subscription, SubscriptionStatus, UsageEndEntry
from billing.operations.final_usage import (
    bill_ended_periods,
    final_usage_key,
    last_usage_charge,
    told_in_advance,
)
from billing.rules.lifecycle import CancelMode
from billing.rules.projection import ChargeKind
from core.payments.gateway import get_gateway
from tests.api.test_api_usage_reminders import REMIND, _metered
from tests.builders import DECLINED_NUMBER, card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

PERIOD_START = date(2027, 2, 15)  # LastPaymentDate: the open period's first day
LAST_PAID_DAY = date(2027, 3, 14)  # PaidThroughDate
USAGE_AMOUNT = 518  # 1,035 calls at half a cent, rounded half up
FINAL_USAGE_LOG = "billing.operations.final_usage"


@contextmanager
def _on(day: date) -> Iterator[None]:
    """The clock at noon UTC of ``day`` (a billing day in any BILLING_TIMEZONE of the tests)."""
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        yield


def _use_calls(sub: Subscription, day: date, calls: int) -> None:
    at = datetime(day.year, day.month, day.day, 10, tzinfo=UTC)
    event = UsageEvent(sub.account_id, f"calls-{day.isoformat()}", Decimal(calls), int(at.timestamp()),
                       day.isoformat())
    record_event(get_meter("api_calls"), event, now=at)


def _metered_with_usage() -> Subscription:
    sub = _metered()
    _use_calls(sub, date(2027, 3, 1), 1035)
    return fresh(sub)


def _card_declines(sub: Subscription) -> None:
    fresh(sub).update(actions=[Subscription.PaymentDetails.Token.set(card(DECLINED_NUMBER).token)])


def _entries() -> list[tuple[str, int]]:
    """Each last usage charge still to bill: its due day and the declined charges so far."""
    return [(entry.SK.split("#")[0], int(entry.Attempts or 0)) for entry in UsageEndEntry.query(UsageEndEntry.pk())]


def _usage_charges(sub: Subscription) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "usage"]


# --- a declined charge: its retries, their keys, giving up --------------------------------


def test_a_declined_last_usage_charge_is_retried_on_the_retry_days_each_under_its_own_key_then_given_up(
        moto_table, caplog: pytest.LogCaptureFixture) -> None:
    # PAYMENT_RETRY_DAYS (1, 3, 5): the cancel's own attempt, then retries 1, 2 and 2 days
    # after each decline, then given up. A retry under the first key would have the
    # processor replay its decline, so each attempt has a key of its own.
    sub = _metered_with_usage()
    _card_declines(sub)
    with _on(REMIND):
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    assert _entries() == [("2027-03-09", 1)]

    declined = []
    for day, left in [(date(2027, 3, 9), [("2027-03-11", 2)]), (date(2027, 3, 11), [("2027-03-13", 3)]),
                      (date(2027, 3, 13), [])]:
        with _on(day), caplog.at_level(logging.WARNING, logger=FINAL_USAGE_LOG):
            counts = bill_ended_periods(day)
        declined.append((counts["usage_declined"], counts["usage_billed"]))
        assert _entries() == left, day

    assert declined == [(1, 0)] * 3
    first = f"usage:{sub.sub_id}:{PERIOD_START.isoformat()}"
    charges = _usage_charges(sub)
    assert sorted(c["idempotency_key"] for c in charges) == [first, f"{first}:retry1", f"{first}:retry2",
                                                              f"{first}:retry3"]
    assert {(c["amount"], c["status"]) for c in charges} == {(USAGE_AMOUNT, "declined")}
    # The key of a first attempt, as the reconciliation and the processor's records know it.
    assert final_usage_key(sub.sub_id, PERIOD_START) == first
    assert f"usage of {sub.sub_id}'s last period given up after 4 declined charges (card_declined)" \
        in caplog.messages
    assert [r for r in receipts_of(sub) if r.Kind == "usage"] == []


def test_without_retry_days_a_declined_last_usage_charge_is_given_up_at_once(
        moto_table, settings, caplog: pytest.LogCaptureFixture) -> None:
    # No retry day: the cancel's own decline is the last; nothing is left for a run.
    settings.PAYMENT_RETRY_DAYS = []
    sub = _metered_with_usage()
    _card_declines(sub)
    with _on(REMIND), caplog.at_level(logging.WARNING, logger=FINAL_USAGE_LOG):
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    assert _entries() == []
    assert f"usage of {sub.sub_id}'s last period given up after 1 declined charges (card_declined)" \
        in caplog.messages
    [charge] = _usage_charges(sub)
    assert (charge["idempotency_key"], charge["status"]) == (f"usage:{sub.sub_id}:2027-02-15", "declined")


# --- which entries the run bills ----------------------------------------------------------


def _cancelled_at_period_end() -> Subscription:
    sub = _metered_with_usage()
    with _on(REMIND):
        lifecycle.cancel_at_period_end(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    return fresh(sub)


def _put_entry(sub: Subscription, last_day: date, mode: str = CancelMode.PERIOD_END) -> UsageEndEntry:
    with _on(REMIND):
        entry = usage_end_entry(sub, last_day, mode)
        entry.save()
    return entry


def test_an_entry_of_a_subscription_kept_since_is_dropped_unbilled(moto_table) -> None:
    sub = _metered_with_usage()  # active, never cancelled: its renewal bills the usage
    _put_entry(sub, LAST_PAID_DAY)
    with _on(date(2027, 3, 15)):
        counts = bill_ended_periods(date(2027, 3, 15))
    assert (counts["usage_billed"], _entries(), _usage_charges(sub)) == (0, [], [])


def test_an_entry_for_another_last_day_than_the_cancel_s_is_dropped_unbilled(moto_table) -> None:
    # Cancelled at period end (served to 14 March): an entry left by an earlier cancel to
    # another day bills nothing; the cancel's own entry bills the period once, on its day.
    sub = _cancelled_at_period_end()
    _put_entry(sub, date(2027, 3, 10))
    with _on(date(2027, 3, 11)):
        early = bill_ended_periods(date(2027, 3, 11))
    assert (early["usage_billed"], _usage_charges(sub)) == (0, [])
    assert _entries() == [("2027-03-15", 0)]
    with _on(date(2027, 3, 15)):
        due = bill_ended_periods(date(2027, 3, 15))
    [charge] = _usage_charges(sub)
    assert (due["usage_billed"], charge["amount"], _entries()) == (1, USAGE_AMOUNT, [])


# --- which last charges are announced in advance ------------------------------------------


@pytest.mark.parametrize(("mode", "attempts", "told"), [
    (CancelMode.PERIOD_END, 0, True),  # the customer's reminder and invoice.upcoming
    (CancelMode.PERIOD_END, 1, False),  # a retry: the decline's own e-mail told the customer
    (CancelMode.NOW, 0, False),  # a cancel now's charge is made at the cancel
    (CancelMode.NOW, 1, False),
])
def test_only_a_cancel_at_period_end_s_first_attempt_is_announced_in_advance(
        moto_table, mode: str, attempts: int, told: bool) -> None:
    sub = _metered()
    with _on(REMIND):
        entry = usage_end_entry(sub, LAST_PAID_DAY, mode, attempts=attempts)
    assert told_in_advance(entry) is told


# --- the charge still to come of a cancel at period end -----------------------------------


def test_a_cancel_at_period_end_s_last_charge_is_its_usage_alone_with_its_tax(moto_table) -> None:
    sub = _cancelled_at_period_end()
    charge = last_usage_charge(sub, REMIND)
    assert charge is not None
    assert (charge.date, charge.period_start, charge.period_end, charge.kind) == \
        (date(2027, 3, 15), PERIOD_START, LAST_PAID_DAY, ChargeKind.FINAL_USAGE)
    # no fee, no coupon: the usage alone, which the tax line carries
    assert (charge.list_price, charge.discount, charge.amount, charge.usage_amount) == (0, 0, USAGE_AMOUNT,
                                                                                       USAGE_AMOUNT)
    assert charge.tax_line is not None and charge.tax_line.gross == USAGE_AMOUNT


def test_a_cancel_at_period_end_with_no_usage_still_shows_its_last_charge_of_nothing(moto_table) -> None:
    # Nothing used yet: the last charge is still to come (events may arrive until the last
    # day), shown as it stands, at 0.
    sub = _metered()
    with _on(REMIND):
        lifecycle.cancel_at_period_end(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    charge = last_usage_charge(fresh(sub), REMIND)
    assert charge is not None and (charge.date, charge.amount, charge.kind) == (date(2027, 3, 15), 0,
                                                                                 ChargeKind.FINAL_USAGE)
    assert [usage.quantity for usage in charge.usages] == [0]


def test_the_last_charge_of_prices_already_read_reads_no_price_again(moto_table, ddb_requests) -> None:
    # A page that has read the metered prices hands them over: each GetItem of a price
    # saved, the charge the same.
    sub = _cancelled_at_period_end()
    prices = {price_id: access.get_price(price_id) for price_id in sub.metered_price_ids}
    ddb_requests.reset()
    read_again = last_usage_charge(sub, REMIND)
    reads_alone = ddb_requests.by_name()["GetItem"]
    ddb_requests.reset()
    handed = last_usage_charge(sub, REMIND, prices=prices)
    assert ddb_requests.by_name()["GetItem"] == reads_alone - len(prices) and handed == read_again


def test_a_subscription_not_cancelled_has_no_last_charge(moto_table) -> None:
    sub = _metered_with_usage()
    assert sub.Status == SubscriptionStatus.ACTIVE and last_usage_charge(sub, REMIND) is None
    assert last_usage_charge(sub, REMIND + timedelta(days=30)) is None
