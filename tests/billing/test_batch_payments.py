"""The payment batch: outcomes, exactly once under crashes and races, requests per payment."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest
from django.core import mail

import core.mail
from billing import access, batches
from billing.access.coupons import coupon_attributes
from billing.models import SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.money import format_with_code
from core.payments.gateway import get_gateway
from tests.builders import at_once, card, due_subscription, fresh, make_account, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


def charges_per_sub(subs, period: date = D) -> Counter:
    gateway = get_gateway()
    made = gateway.charges_made(billing_date=period.isoformat())
    return Counter(c["metadata"]["sub_id"] for c in made)


def test_a_due_payment_is_charged_receipted_advanced_and_mailed(table) -> None:
    [sub] = seed_due(1, due=D)
    summary = batches.run_payments(run_date=D, workers=2)
    assert summary.counts["paid"] == 1 and summary.ok
    after = fresh(sub)
    assert after.NextPaymentDate == "2027-04-15"
    assert after.LastPaymentDate == "2027-03-15"
    assert after.NextReminderDate == "2027-04-08"
    assert after.Status == SubscriptionStatus.ACTIVE and after.RetryCount == 0 and after.BillingPeriod is None
    assert after.Version == 2  # incremented, not checked
    [receipt] = receipts_of(sub)
    assert receipt.BillingDate == "2027-03-15" and receipt.ProcessedAmount == 999
    assert receipt.TTL is not None
    [message] = mail.outbox
    assert message.to == [sub.Email]
    assert "$9.99" in message.body and "4242" in message.body
    assert message.alternatives and "$9.99" in message.alternatives[0][0]
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["idempotency_key"] == f"{sub.sub_id}:2027-03-15"


def test_dry_run_charges_writes_and_sends_nothing(table, ddb_requests) -> None:
    [sub] = seed_due(1, due=D)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, dry_run=True, catch_up_days=0)
    assert summary.counts["dry_run"] == 1 and summary.counts["paid"] == 0
    # reads only: the index pages, and the seller's tax profile once per run
    assert ddb_requests.by_name() == Counter({"Query": ddb_requests.by_name()["Query"], "GetItem": 1})
    assert get_gateway().charges_made() == [] and mail.outbox == []
    assert fresh(sub).NextPaymentDate == D.isoformat()


def test_not_due_yet_is_skipped(table) -> None:
    [sub] = seed_due(1, due=D)
    outcome = payments.take_payment(fresh(sub), run_date=date(2027, 3, 14))
    assert outcome.status == "skipped" and "not due" in outcome.reason
    assert get_gateway().charges_made() == []


def _crash_after_charge(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("crash after the charge")
    monkeypatch.setattr(access, "create_receipt", boom)


def _crash_after_receipt(monkeypatch):
    real = access.create_receipt

    def boom(*a, **k):
        real(*a, **k)
        raise RuntimeError("crash after the receipt")
    monkeypatch.setattr(access, "create_receipt", boom)


def _crash_before_update(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("crash before the update")
    monkeypatch.setattr(access, "advance_after_payment", boom)


def _crash_after_update(monkeypatch):
    real = access.advance_after_payment

    def boom(*a, **k):
        real(*a, **k)
        raise RuntimeError("crash after the update")
    monkeypatch.setattr(access, "advance_after_payment", boom)


@pytest.mark.parametrize("crash", [_crash_after_charge, _crash_after_receipt, _crash_before_update,
                                   _crash_after_update])
def test_a_crash_at_any_step_then_a_rerun_charges_and_receipts_exactly_once(table, crash) -> None:
    subs = seed_due(25, due=D)
    with pytest.MonkeyPatch.context() as mp:
        crash(mp)
        first = batches.run_payments(run_date=D, workers=4)
    assert first.counts["errors"] == 25 and first.outcome == "failed"
    batches.run_payments(run_date=D, workers=4)
    batches.run_payments(run_date=D, workers=4)  # and once more: nothing left to do
    charges = charges_per_sub(subs)
    for sub in subs:
        assert charges[sub.sub_id] == 1
        assert [r.BillingDate for r in receipts_of(sub)] == [D.isoformat()]
        assert fresh(sub).NextPaymentDate == "2027-04-15"


@pytest.mark.local_engine
def test_two_runs_at_once_over_1000_subscriptions_never_double_charge(local_table) -> None:
    subs = seed_due(1000, due=D)
    results = at_once(lambda: batches.run_payments(run_date=D, workers=8))
    assert sum(r.counts["paid"] for r in results) == 1000
    assert sum(r.counts["errors"] for r in results) == 0
    charges = charges_per_sub(subs)
    assert len(charges) == 1000 and set(charges.values()) == {1}
    mails = Counter(m.to[0] for m in mail.outbox)
    assert len(mails) == 1000 and set(mails.values()) == {1}
    for sub in subs[::50]:
        assert len(receipts_of(sub)) == 1
        assert fresh(sub).NextPaymentDate == "2027-04-15"
    assert not list(access.get_due_payments_by_date(D))


def test_a_payment_costs_two_writes_plus_its_share_of_the_index_pages(table, ddb_requests) -> None:
    seed_due(40, due=D)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, workers=4, catch_up_days=0)
    assert summary.counts["paid"] == 40
    ops = ddb_requests.by_name()
    # +1 PutItem and +1 UpdateItem: the BatchRun record; one index page holds all 40.
    # The receipt, its payment.succeeded event (M6) and its number's look-up item are one
    # TransactWriteItems: still two writes per payment. The receipt number is taken by that
    # same transaction (its series' counter, one item more): no request of its own.
    # +1 Query per run: the incomplete subscriptions past their deadline (billing/operations/expiry.py).
    # +1 Query per run: the metered subscriptions cancelled at their period's end, whose last
    # period's usage is due (billing/operations/final_usage.py ``bill_ended_periods``).
    # +1 GetItem per run: the seller's tax profile (every invoice of the run is taxed by it).
    assert ops == Counter({"PutItem": 1, "TransactWriteItems": 40, "UpdateItem": 41, "Query": 3, "GetItem": 1})
    assert "Scan" not in ops


def test_a_payment_a_coupon_takes_whole_costs_what_a_charged_one_does(table, ddb_requests) -> None:
    # Nothing to charge (the gateway refuses 0), but the same path as a charge: the receipt
    # number taken by the receipt's transaction and the seller's profile the run read once.
    coupon = access.create_coupon("FREE", actor="staff", percent_off=100, duration="forever")
    token = card()
    subs = [due_subscription(n, due=D, prefix="free", card=token) for n in range(3)]
    for sub in subs:
        for name, value in coupon_attributes(coupon).items():
            setattr(sub, name, value)
    access.batch_items(subs)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    assert summary.counts["paid"] == 3 and get_gateway().charges_made() == []
    assert ddb_requests.by_name() == Counter({"PutItem": 1, "TransactWriteItems": 3, "UpdateItem": 4, "Query": 3,
                                              "GetItem": 1})
    assert [r.ProcessedAmount for s in subs for r in receipts_of(s)] == [0, 0, 0]


def test_the_run_counts_the_milliseconds_the_gateway_took(moto_table, settings) -> None:
    # The operator's metrics (billing/batches/metrics.py): the time spent waiting for the
    # processor, in milliseconds. At least the two round trips the gateway was slowed by;
    # the upper bound is far above them (a unit check, not a timing).
    settings.PAYMENT_GATEWAY_LATENCY_MS = 40
    seed_due(2, due=D)
    summary = batches.run_payments(run_date=D, workers=1, catch_up_days=0)
    assert summary.counts["paid"] == 2 and summary.counts["gateway_calls"] == 2
    assert 80 <= summary.counts["gateway_ms"] < 60_000


def test_catch_up_takes_three_skipped_days_once_each(table) -> None:
    days = [date(2027, 3, d) for d in (11, 12, 13, 14, 15)]
    batches.run_payments(run_date=days[0])  # the last completed run: the 11th
    subs = {d: seed_due(3, due=d, prefix=f"d{d.day}") for d in days[1:]}
    summary = batches.run_payments(run_date=days[-1])  # the 12th-14th were never run
    assert summary.dates == days[1:]
    assert summary.counts["paid"] == 12
    for d, group in subs.items():
        assert set(charges_per_sub(group, d).values()) == {1}
        for sub in group:
            assert [r.BillingDate for r in receipts_of(sub)] == [d.isoformat()]
    [latest, *_] = access.list_batch_runs("payments")
    assert (latest.FirstDate, latest.LastDate, latest.Outcome) == ("2027-03-12", "2027-03-15", "completed")
    assert latest.Counts["paid"] == 12 and latest.FinishedAt
    again = batches.run_payments(run_date=days[-1])
    assert again.dates == [days[-1]] and again.counts["processed"] == 0


def test_the_first_run_ever_catches_up_a_date_owed_before_it(table) -> None:
    # A subscription made (its first payment taken at once) before cron was set up: its
    # next date passed with no run at all. The first run takes it, once; the next run
    # starts after the first one's dates.
    [owed] = seed_due(1, due=date(2027, 3, 1), prefix="owed")
    summary = batches.run_payments(run_date=date(2027, 3, 15), catch_up_days=20)
    assert summary.dates[0] == date(2027, 2, 23) and summary.dates[-1] == date(2027, 3, 15)
    assert summary.counts["paid"] == 1
    assert [r.BillingDate for r in receipts_of(owed)] == ["2027-03-01"]
    again = batches.run_payments(run_date=date(2027, 3, 16), catch_up_days=20)
    assert again.dates == [date(2027, 3, 16)] and again.counts["processed"] == 0


def test_catch_up_is_bounded(table) -> None:
    batches.run_payments(run_date=date(2027, 1, 1))
    summary = batches.run_payments(run_date=date(2027, 3, 15), catch_up_days=5)
    assert summary.dates[0] == date(2027, 3, 10) and len(summary.dates) == 6


def test_a_mail_failure_keeps_the_payment_and_counts_an_error(moto_table, monkeypatch) -> None:
    [sub] = seed_due(1, due=D)

    def smtp_down(*a, **k):
        raise ConnectionRefusedError("smtp down")
    monkeypatch.setattr(core.mail, "send_mail", smtp_down)
    summary = batches.run_payments(run_date=D)
    assert summary.counts["paid"] == 1 and summary.counts["errors"] == 1 and not summary.ok
    assert fresh(sub).NextPaymentDate == "2027-04-15"
    assert "mail: ConnectionRefusedError" in summary.failures[-1]["reason"]
    monkeypatch.undo()
    assert batches.run_payments(run_date=D).counts["processed"] == 0  # never charged twice


def test_a_first_payment_is_recorded_though_the_customer_changed_the_card_meanwhile(moto_table) -> None:
    # The charge is taken: its advance moves the version on but does not check it, or the
    # customer's edit in another tab would leave a paid subscription unstarted.
    account = make_account("pat@example.com")
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD", card=card(), today=D,
        reminder_days_before=7, product_name="Daily News")
    access.replace_card(fresh(sub), card(), actor="customer")  # the version moves on
    out = payments.take_first_payment(sub, today=D)
    assert out.status == PaymentStatus.PAID, out.reason
    after = fresh(sub)
    assert (after.Status, after.LastPaymentDate, after.PaidThroughDate, after.NextPaymentDate) == (
        SubscriptionStatus.ACTIVE, "2027-03-15", "2027-04-14", "2027-04-15")
    made, _ = access.events_after(None, limit=100)
    assert [e.Type for e in made if e.ObjectId == sub.sub_id].count("subscription.activated") == 1
    [receipt] = receipts_of(sub)
    assert receipt.ProcessedAmount == 999


def test_a_cancelled_subscription_is_never_charged(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    live = fresh(sub)
    access.cancel_subscription(live)
    outcome = payments.take_payment(live, run_date=D)
    assert outcome.status == "skipped" and get_gateway().charges_made() == []


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (999, "usd", "9.99 USD"), (123456789, "EUR", "1,234,567.89 EUR"), (5000, "JPY", "5,000 JPY"),
    (1005, "KWD", "1.005 KWD"), (7, "GBP", "0.07 GBP"),
])
def test_amounts_are_formatted_from_minor_units(amount, currency, text) -> None:
    assert format_with_code(amount, currency) == text
