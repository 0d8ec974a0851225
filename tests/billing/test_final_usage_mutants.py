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
from django.core import mail

from billing import access
from billing.access.usage import UsageEvent, get_meter, record_event
from billing.access.usage_billing import attach_metered_price, usage_end_entry
from billing.actions import lifecycle
from billing.batches.reconcile import reconcile
from billing.models import AuditAction, Subscription, SubscriptionStatus, UsageEndEntry
from billing.operations import payments
from billing.operations.final_usage import (
    bill_ended_periods,
    bill_final_usage,
    final_usage_key,
    last_usage_charge,
    record_usage_charge,
    told_in_advance,
)
from billing.rules.invoice import invoice_of
from billing.rules.lifecycle import CancelMode
from billing.rules.projection import ChargeKind
from billing.rules.usage import EventRefused
from core.payments.errors import GatewayError
from core.payments.gateway import ChargeResult, get_gateway
from tests.api.test_api_usage_reminders import PAY, REMIND, _metered
from tests.builders import (
    DECLINED_NUMBER,
    card,
    fresh,
    make_account,
    make_subscription,
    prices_exclude_vat,
    receipts_of,
)

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


def _use_calls(sub: Subscription, day: date, calls: int, *, sent: datetime | None = None) -> None:
    """``calls`` at 10:00 UTC of ``day``, sent then (or at ``sent``)."""
    at = datetime(day.year, day.month, day.day, 10, tzinfo=UTC)
    event = UsageEvent(sub.account_id, f"calls-{day.isoformat()}", Decimal(calls), int(at.timestamp()),
                       day.isoformat())
    record_event(get_meter("api_calls"), event, now=sent or at)


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
    # another day bills nothing, and the run goes on to the cancel's own entry, which bills
    # the period once, under the first attempt's key.
    sub = _cancelled_at_period_end()
    _put_entry(sub, date(2027, 3, 10))
    with _on(date(2027, 3, 11)):
        early = bill_ended_periods(date(2027, 3, 11))
    assert (early["usage_billed"], _usage_charges(sub)) == (0, [])
    assert _entries() == [("2027-03-15", 0)]
    _put_entry(sub, date(2027, 3, 12))  # due on the 13th: read before the cancel's own
    with _on(date(2027, 3, 15)):
        due = bill_ended_periods(date(2027, 3, 15))
    [charge] = _usage_charges(sub)
    assert (due["usage_billed"], charge["amount"], _entries()) == (1, USAGE_AMOUNT, [])
    assert charge["idempotency_key"] == f"usage:{sub.sub_id}:{PERIOD_START.isoformat()}"


def _another_subscriber(price_id: str) -> Subscription:
    """A second subscription to ``_metered``'s price, paid as the first (15 February to 14 March)."""
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=PERIOD_START)
    sub = access.set_schedule(sub, next_payment=PAY, last_payment=PERIOD_START, next_reminder=REMIND,
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price_id, actor="test")


def _two_cancelled_at_period_end(*, declining: bool = False) -> list[Subscription]:
    """Two subscriptions cancelled at period end, each with 518 cents of usage, in the order
    the run reads their entries (by SubId: both are due on 15 March)."""
    first = _metered_with_usage()
    second = _another_subscriber(first.MeteredPriceId)
    _use_calls(second, date(2027, 3, 1), 1035)
    for sub in (first, second):
        if declining:
            _card_declines(sub)
        with _on(REMIND):
            lifecycle.cancel_at_period_end(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    return sorted((fresh(first), fresh(second)), key=lambda sub: sub.sub_id)


class _Unreachable:
    """The processor out of reach: the charge's outcome unknown (``GatewayError``)."""

    def charge(self, *args: object, **kwargs: object) -> None:
        raise GatewayError("timed out")


def test_a_run_that_cannot_reach_the_processor_leaves_every_entry_for_the_next_which_bills_each(
        moto_table, caplog: pytest.LogCaptureFixture) -> None:
    subs = _two_cancelled_at_period_end()
    with _on(PAY), caplog.at_level(logging.WARNING, logger=FINAL_USAGE_LOG):
        unreached = bill_ended_periods(PAY, gateway=_Unreachable())  # type: ignore[arg-type]
    assert (unreached["usage_billed"], unreached["usage_declined"]) == (0, 0)
    assert _entries() == [("2027-03-15", 0)] * 2 and get_gateway().charges_made() == []
    assert [f"usage of {sub.sub_id}'s last period not billed yet: timed out" for sub in subs] == \
        [m for m in caplog.messages if "not billed yet" in m]

    with _on(PAY):
        billed = bill_ended_periods(PAY, gateway=get_gateway())
    assert (billed["usage_billed"], billed["usage_declined"], _entries()) == (2, 0, [])
    for sub in subs:
        [charge] = _usage_charges(sub)
        assert (charge["idempotency_key"], charge["amount"]) == (f"usage:{sub.sub_id}:2027-02-15", USAGE_AMOUNT)
        # the run's receipts are the batch's doing
        [paid] = [e for e in access.get_events_by_account(sub.account_id)
                  if e.Action == AuditAction.PAYMENT_SUCCEEDED]
        assert paid.Actor == "batch"


def test_a_run_counts_each_declined_last_usage_charge(moto_table) -> None:
    _two_cancelled_at_period_end(declining=True)
    with _on(PAY):
        counts = bill_ended_periods(PAY)
    assert (counts["usage_billed"], counts["usage_declined"]) == (0, 2)
    assert _entries() == [("2027-03-16", 1)] * 2


def test_a_run_of_some_shards_bills_only_the_subscriptions_it_takes(moto_table) -> None:
    # The run's shard takes the later of the two in the entries' order: the one before it
    # is left for its own shard's run, not the end of this one.
    first, second = _two_cancelled_at_period_end()
    with _on(PAY):
        counts = bill_ended_periods(PAY, takes=lambda sub_id: sub_id == second.sub_id)
    assert counts["usage_billed"] == 1
    assert (len(_usage_charges(first)), len(_usage_charges(second))) == (0, 1)
    [left] = UsageEndEntry.query(UsageEndEntry.pk())
    assert left.SubId == first.sub_id


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


def test_reading_the_last_charge_closes_no_day_so_usage_sent_after_it_is_billed(moto_table) -> None:
    # The upcoming payment and the pages read the last charge as it stands; only the charge
    # itself closes the period, so the calls of 10 March, sent after a reading, are billed.
    sub = _cancelled_at_period_end()
    with _on(REMIND):
        shown = last_usage_charge(sub, REMIND)
    _use_calls(sub, date(2027, 3, 10), 1000)
    with _on(PAY):
        assert bill_ended_periods(PAY)["usage_billed"] == 1
    [charge] = _usage_charges(sub)
    assert shown is not None and (shown.amount, charge["amount"]) == (USAGE_AMOUNT, 1018)  # 2,035 calls


def test_the_run_reads_each_subscription_due_by_its_key(moto_table, ddb_requests) -> None:
    # One GetItem of the subscription per entry (its key's SKU is on the entry), never a
    # Query for it: what a run of many entries costs.
    _cancelled_at_period_end()
    ddb_requests.reset()
    with _on(PAY):
        assert bill_ended_periods(PAY)["usage_billed"] == 1
    # two Queries: the entries due, and the period's usage
    assert ddb_requests.by_name()["Query"] == 2, ddb_requests.by_name()


# --- what the cancel's charge closes and records ------------------------------------------


def test_a_cancel_s_usage_charge_closes_the_days_it_billed(moto_table) -> None:
    # Each event of a day billed is on one receipt: an event of a day the cancel billed,
    # sent after it, is refused rather than left unbilled.
    sub = _metered_with_usage()
    with _on(REMIND):
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    with pytest.raises(EventRefused) as refused:
        _use_calls(sub, date(2027, 3, 5), 10, sent=datetime(2027, 3, 8, 13, tzinfo=UTC))
    assert refused.value.reason == "period_billed"


def test_a_cancel_s_usage_receipt_stands_beside_the_payment_of_its_first_day(moto_table) -> None:
    # Paid on 15 March (a receipt of that day), cancelled now on the 20th: the usage of 15-20
    # March is billed on a receipt of its own, keyed apart from the payment's of the same
    # first day, and the run's reconciliation finds each charge's own receipt.
    sub = _metered_with_usage()
    with _on(PAY):
        assert payments.take_payment(fresh(sub), run_date=PAY).status == "paid"
    _use_calls(sub, date(2027, 3, 16), 100)  # 50 cents
    cancel_on = date(2027, 3, 20)
    with _on(cancel_on):
        lifecycle.cancel_now(fresh(sub), today=cancel_on, actor="customer", reason="too_expensive")
    on_the_15th = sorted((r.Kind or "payment", r.ProcessedAmount) for r in receipts_of(sub)
                         if r.BillingDate == "2027-03-15")
    assert [kind for kind, _ in on_the_15th] == ["payment", "usage"] and on_the_15th[1][1] == 50, on_the_15th
    # the payment's and the usage's charges (the refund of the unused days is no charge)
    with _on(cancel_on + timedelta(days=1)):
        checked, differences = reconcile(PAY, cancel_on + timedelta(days=1))
    assert (checked, differences) == (2, [])


def test_a_cancel_s_usage_receipt_records_the_charge_and_its_e_mail_names_the_days_paid(moto_table) -> None:
    # Cancelled now on 8 March: the usage of 15 February to 8 March, charged with the days
    # it pays for in its metadata, on a receipt of the product with its tax (an invoice),
    # the customer's doing, and an e-mail that says the subscription ends with those days.
    sub = _metered_with_usage()
    mail.outbox = []
    with _on(REMIND):
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    [charge] = _usage_charges(sub)
    meta = charge["metadata"]
    assert (meta["billing_date"], meta["period_start"], meta["period_end"]) == ("2027-02-15", "2027-02-15",
                                                                                  "2027-03-08")
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "usage"]
    assert (receipt.ProductName, receipt.ProcessedAmount) == ("Api", USAGE_AMOUNT)  # the subscription's name
    doc = invoice_of(receipt)
    assert doc is not None and sum(line.gross for line in doc.lines) == USAGE_AMOUNT
    [paid] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.PAYMENT_SUCCEEDED]
    assert paid.Actor == "customer"
    [sent] = [m for m in mail.outbox if receipt.Number in str(m.subject)]
    assert "15 February 2027 to 8 March 2027" in sent.body
    assert "You have paid for it up to 8 March 2027: it runs until the end of that day, then it ends." in sent.body


@pytest.mark.parametrize("calls", [1035, 0], ids=["charged", "nothing-charged"])
def test_a_cancel_s_usage_receipt_reads_neither_the_price_nor_itself_again(
        moto_table, ddb_requests, calls: int) -> None:
    # The usage priced for the charge gives the receipt its lines (no GetItem of the price
    # again), and a receipt just written is e-mailed as it is (no GetItem of it): four
    # GetItems in all, the price and the meter among them, each read once.
    sub = _metered()
    _use_calls(sub, date(2027, 3, 1), calls)
    sub = fresh(sub)
    ddb_requests.reset()
    with _on(REMIND):
        done = bill_final_usage(sub, last_day=REMIND, actor="customer")
    assert done.receipt is not None and done.receipt.ProcessedAmount == (USAGE_AMOUNT if calls else 0)
    assert ddb_requests.by_name()["GetItem"] == 4, ddb_requests.by_name()


class _Spy:
    """The test processor, each charge's ``off_session`` noted."""

    def __init__(self) -> None:
        self.gateway = get_gateway()
        self.off_session: list[bool] = []

    def charge(self, token: str, amount: int, currency: str, idempotency_key: str, metadata: dict[str, str],
               off_session: bool = True) -> ChargeResult:
        self.off_session.append(off_session)
        return self.gateway.charge(token, amount, currency, idempotency_key, metadata, off_session=off_session)


def test_the_run_charges_the_last_usage_with_the_customer_away(moto_table) -> None:
    # No one is there to confirm with the bank: the charge is made off session (a card that
    # asks for the cardholder is then declined, and retried).
    _cancelled_at_period_end()
    spy = _Spy()
    with _on(PAY):
        assert bill_ended_periods(PAY, gateway=spy)["usage_billed"] == 1  # type: ignore[arg-type]
    assert spy.off_session == [True]


def test_a_last_usage_charge_billed_after_a_change_of_rate_keeps_the_rate_it_was_charged_at(moto_table) -> None:
    # An Italian seller, prices before VAT; a Finnish consumer (OSS: Finland's VAT, 24%
    # until 31 August 2024, 25.5% since). Served to 31 August, billed on 1 September: the
    # receipt is the buyer's and records the tax charged, at the last day's rate, not the
    # rate of the day it is written.
    prices_exclude_vat()
    sub = _metered()
    _use_calls(sub, date(2024, 8, 20), 1000)  # 500 cents before VAT
    sub = fresh(sub)
    sub.BillingCountry, sub.LastPaymentDate = "FI", "2024-08-01"
    with _on(date(2024, 9, 1)):
        done = bill_final_usage(sub, last_day=date(2024, 8, 31), actor="batch")
    receipt = done.receipt
    assert receipt is not None
    assert (receipt.BuyerCountry, receipt.TaxRate, receipt.Net, receipt.Tax, receipt.ProcessedAmount) == \
        ("FI", "24", 500, 120, 620)


def test_a_subscription_without_a_card_has_its_last_usage_charge_declined(moto_table) -> None:
    # No card on file: the processor refuses the charge (no token), as any decline; the
    # charge is retried, never an error.
    sub = _metered_with_usage()
    sub.PaymentDetails = None
    with _on(REMIND):
        done = bill_final_usage(sub, last_day=REMIND, actor="customer")
    assert (done.receipt, done.declined) == (None, "invalid_token")


def test_a_usage_charge_from_before_taxes_were_kept_is_recorded_with_the_tax_in_force_when_found(
        moto_table) -> None:
    # The reconciliation records a usage charge whose metadata carries no tax (made before
    # taxes were kept): the tax included in it at the rate in force on the day it is found,
    # 20 August 2024 (a Finnish consumer of an Italian seller: 24%, 25.5% from September).
    prices_exclude_vat()
    sub = fresh(_metered())
    sub.BillingCountry = "FI"
    meta = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "kind": "usage",
            "billing_date": "2024-08-01", "period_start": "2024-08-01", "period_end": "2024-08-10"}
    found = ChargeResult(status="succeeded", charge_id="ch_before_taxes", amount=620, currency="USD", metadata=meta)
    with _on(date(2024, 8, 20)):
        receipt = record_usage_charge(sub, found, actor="reconcile")
    assert (receipt.ProcessedAmount, receipt.Kind, receipt.ChargeId) == (620, "usage", "ch_before_taxes")
    assert (receipt.TaxCountry, receipt.TaxRate, receipt.Net, receipt.Tax) == ("FI", "24", 500, 120)
