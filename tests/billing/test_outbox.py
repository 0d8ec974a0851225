"""The merchant's events (billing/access/outbox.py): each change that reports one writes it
in its own transaction, driven here through the actions and the batches, once per event
type with the right object; a refused change writes no event, and an event that cannot be
written takes its change with it; ``events_after`` reads them in order across days, page by
page. On moto and DynamoDB Local."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing import access, batches
from billing.access import outbox
from billing.access.usage_billing import attach_metered_price
from billing.actions import lifecycle, switch
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.models import AuditEvent, MerchantEvent, MerchantEventType, MeterAggregation, SubscriptionStatus
from billing.operations import refunds
from billing.rules.pricing import PriceTerms
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import (
    DECLINED_NUMBER,
    card,
    fresh,
    make_account,
    make_subscription,
    receipts_of,
    seed_due,
)

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)
T = MerchantEventType


def at(day: date, minute: int = 0):
    """A moment of ``day``, frozen: each step of a story at its own minute, so its events sort after the last's."""
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, minute, tzinfo=UTC), tick=False)


def all_events(on: date) -> list[MerchantEvent]:
    with at(on, 59):
        events, more = access.events_after(None, limit=1000)
    assert more is None
    return events


def of(events: list[MerchantEvent], kind: MerchantEventType, object_id: str) -> list[MerchantEvent]:
    return [e for e in events if e.Type == kind and e.ObjectId == object_id]


@pytest.fixture
def catalog(table) -> None:
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 2000, "USD")
    access.create_product("TRIAL", "Trial box", 1500, "USD", trial_days=14)


METERED_REMINDER = date(2027, 3, 18)
METERED_ANNOUNCED = date(2027, 3, 22)  # UPCOMING_INVOICE_DAYS before its payment


def _metered_subscription():
    """A subscription paid once, billing a metered price's usage with its next payment (25 March)."""
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal("0.5")), actor="test",
                                    nickname="per_unit", meter="api_calls")
    sub = make_subscription(make_account("meg@example.com"), sku="API", payment_day=25, today=date(2027, 2, 25))
    sub = access.set_schedule(sub, next_payment=date(2027, 3, 25), last_payment=date(2027, 2, 25),
                              next_reminder=METERED_REMINDER, last_reminder=date(2027, 2, 18))
    return attach_metered_price(fresh(sub), price.PriceId, actor="test")


def test_each_change_writes_its_event_once_with_its_object(catalog, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
    with at(MADE, 1):
        started = subscribing.subscribe(access.create_account("ann@example.com"), sku="NEWS", product_name="News",
                                        payment_day=10, amount=1000, currency="USD", card=card(), today=MADE,
                                        actor="customer")
    sub = started.sub
    [first] = receipts_of(sub)
    with at(MADE, 2):
        subscribing.change_payment_day(fresh(sub), 12, actor="customer")
    day = MADE + timedelta(days=2)
    with at(day, 3):
        lifecycle.pause(fresh(sub), resume=None, today=day, actor="customer")
    with at(day, 4):
        lifecycle.resume(fresh(sub), today=day, actor="customer")
    day = MADE + timedelta(days=5)
    with at(day, 5):
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=day, actor="customer")
    [upgrade] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    with at(day, 6):
        refunded = refunds.refund_receipt(first, 100, request_id="req-1", actor="staff@example.com")
    dispute = access.Dispute("dp_1", first.ChargeId, 1000, "USD", "fraudulent", "needs_response",
                             "2027-03-15T12:07:00+00:00")
    with at(day, 7):
        assert access.record_dispute(first, dispute, actor="stripe")
    with at(day, 8):  # a status between opened and closed: no event of its own
        assert access.record_dispute(access.get_receipt(sub.account_id, first.SK),
                                     access.Dispute(**{**dispute.__dict__, "status": "under_review"}), actor="stripe")
    with at(day, 9):
        assert access.record_dispute(access.get_receipt(sub.account_id, first.SK),
                                     access.Dispute(**{**dispute.__dict__, "status": "won"}), actor="stripe")
    with at(day, 10):
        lifecycle.cancel_at_period_end(fresh(sub), today=day, actor="customer", reason="too_expensive")
    with at(day, 11):
        lifecycle.keep(fresh(sub), today=day, actor="customer")
    with at(day, 12):
        lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="too_expensive")

    # The payment run: a decline, and a renewal the bank wants confirmed.
    renewal = MADE + timedelta(days=6)
    [declined] = seed_due(1, due=renewal, number=DECLINED_NUMBER, prefix="d")
    [waiting] = seed_due(1, due=renewal, number=AUTHENTICATING_TEST_CARD, prefix="w")
    with at(renewal, 13):
        summary = batches.run_payments(run_date=renewal, workers=1, catch_up_days=0)
    assert summary.counts["declined"] == 1 and summary.counts["action_required"] == 1

    # A free trial: the reminder run three days before its last free day, twice.
    with at(MADE, 14):
        trial = subscribing.subscribe(access.create_account("tia@example.com"), sku="TRIAL", product_name="Trial box",
                                      payment_day=10, amount=1500, currency="USD", card=card(), today=MADE,
                                      actor="customer", trial_days=14).sub
    notice_day = date.fromisoformat(trial.TrialEnd) - timedelta(days=3)
    for minute in (15, 16):
        with at(notice_day, minute):
            batches.run_reminders(run_date=notice_day, catch_up_days=0)

    # A metered subscription's reminder, twice, and the run three days before its payment,
    # twice: the merchant's invoice.upcoming, once.
    metered = _metered_subscription()
    for day in (METERED_REMINDER, METERED_ANNOUNCED):
        for minute in (17, 18):
            with at(day, minute):
                batches.run_reminders(run_date=day, catch_up_days=0)

    events = all_events(MADE + timedelta(days=20))
    expected = {
        T.SUBSCRIPTION_CREATED: sub.sub_id, T.SUBSCRIPTION_ACTIVATED: sub.sub_id, T.SUBSCRIPTION_SWITCHED: sub.sub_id,
        T.SUBSCRIPTION_PAUSED: sub.sub_id, T.SUBSCRIPTION_RESUMED: sub.sub_id,
        T.SUBSCRIPTION_CANCEL_SCHEDULED: sub.sub_id, T.SUBSCRIPTION_CANCELLED: sub.sub_id,
        T.SUBSCRIPTION_TRIAL_WILL_END: trial.sub_id,
        T.PAYMENT_SUCCEEDED: first.Number, T.INVOICE_CREATED: first.Number, T.INVOICE_UPCOMING: metered.sub_id,
        T.REFUND_CREATED: refunded.refund_id, T.DISPUTE_CREATED: "dp_1", T.DISPUTE_CLOSED: "dp_1",
    }
    for kind, object_id in expected.items():
        assert len(of(events, kind, object_id)) == 1, (kind, object_id)
    # The payment day and the cancel undone: two updates of the one subscription.
    assert len(of(events, T.SUBSCRIPTION_UPDATED, sub.sub_id)) == 2
    # The upgrade's charge: its receipt's payment and invoice.
    assert len(of(events, T.PAYMENT_SUCCEEDED, upgrade.Number)) == 1 == len(of(events, T.INVOICE_CREATED, upgrade.Number))
    assert done.charged == upgrade.ProcessedAmount
    [failed] = [e for e in events if e.Type == T.PAYMENT_FAILED]
    [asked] = [e for e in events if e.Type == T.PAYMENT_ACTION_REQUIRED]
    assert failed.Data["subscription"] == declined.sub_id and failed.Data["status"] == "failed"
    assert asked.Data["subscription"] == waiting.sub_id and asked.Data["charge"] == fresh(waiting).PaymentDetails.AwaitingCharge
    assert {e.Type for e in events} == set(MerchantEventType)  # every type, driven by the code that makes it

    # Each carries its object as the API shows it, as it was then.
    [created] = of(events, T.SUBSCRIPTION_CREATED, sub.sub_id)
    [activated] = of(events, T.SUBSCRIPTION_ACTIVATED, sub.sub_id)
    [paid] = of(events, T.PAYMENT_SUCCEEDED, first.Number)
    [cancelled] = of(events, T.SUBSCRIPTION_CANCELLED, sub.sub_id)
    assert created.Data["object"] == "subscription" and created.Data["product"] == "NEWS"
    assert activated.Data["paid_through"] == first.PeriodEnd
    assert (paid.Data["object"], paid.Data["amount"], paid.Data["number"]) == ("receipt", 1000, first.Number)
    assert cancelled.Data["stored_status"] == SubscriptionStatus.CANCELLED and cancelled.Data["product"] == "NEWS-PLUS"
    assert all(e.AccountId == sub.account_id for e in of(events, T.SUBSCRIPTION_UPDATED, sub.sub_id))
    # In the order they were made (each step at its own minute).
    steps = [e for e in events if e.ObjectId == sub.sub_id]
    assert [e.Type for e in steps][-3:] == [T.SUBSCRIPTION_CANCEL_SCHEDULED, T.SUBSCRIPTION_UPDATED,
                                            T.SUBSCRIPTION_CANCELLED]
    assert [e.EventId for e in events] == sorted(e.EventId for e in events)


def subscribed(table, email: str = "bo@example.com"):
    with at(MADE, 1):
        return subscribing.subscribe(access.create_account(email), sku="NEWS", product_name="News", payment_day=10,
                                     amount=1000, currency="USD", card=card(), today=MADE, actor="customer").sub


def audit_of(sub) -> list[AuditEvent]:
    return access.get_events_by_account(sub.account_id)


def test_a_refused_change_writes_no_event(table) -> None:
    sub = subscribed(table)
    before, audit = all_events(MADE), audit_of(sub)
    stale = fresh(sub)
    with at(MADE, 2):
        subscribing.change_payment_day(fresh(sub), 20, actor="customer")
        with pytest.raises(access.ConditionFailed):  # the version read is gone
            access.cancel_subscription(stale, actor="customer")
        with pytest.raises(access.ConditionFailed):  # not cancelling at period end: nothing to keep
            access.keep_subscription(fresh(sub), today=MADE, reminder_days_before=7, actor="customer")
    after = all_events(MADE)
    assert [e.Type for e in after[len(before):]] == [T.SUBSCRIPTION_UPDATED]
    assert len(audit_of(sub)) == len(audit) + 1
    assert fresh(sub).Status == SubscriptionStatus.ACTIVE


def test_an_event_that_cannot_be_written_takes_its_change_with_it(table, monkeypatch) -> None:
    sub = subscribed(table)
    audit = audit_of(sub)
    # The cancel's event id is made to clash with one already written: its put's condition
    # (only if the id is new) refuses, and with it the whole transaction.
    monkeypatch.setattr(outbox.secrets, "token_hex", lambda n: "deadbeef")
    monkeypatch.setattr(outbox, "_event_now", lambda: datetime(2027, 3, 10, 12, 3, tzinfo=UTC))
    with at(MADE, 3):
        access.new_merchant_event(T.SUBSCRIPTION_UPDATED, account_id="x", object_type="subscription", object_id="x",
                                  data={}).save()
        with pytest.raises(access.ConditionFailed):
            access.cancel_subscription(fresh(sub), actor="customer")
    now = fresh(sub)
    assert now.Status == SubscriptionStatus.ACTIVE and now.CancelledDate is None  # the change did not happen
    assert len(audit_of(sub)) == len(audit)  # nor its audit event
    assert not [e for e in all_events(MADE) if e.Type == T.SUBSCRIPTION_CANCELLED]


def test_a_change_refused_in_the_payment_run_writes_no_event(table) -> None:
    renewal = date(2027, 3, 15)
    [sub] = seed_due(1, due=renewal, number=DECLINED_NUMBER)
    with at(renewal, 1):
        batches.run_payments(run_date=renewal, workers=1, catch_up_days=0)
        # The same decline recorded again (another run's): refused, no second event.
        with pytest.raises(access.ConditionFailed):
            access.mark_past_due(sub, slot=renewal, period=renewal, failed_retries=0, retry_on=renewal,
                                 next_reminder=renewal)
    assert [e.Type for e in all_events(renewal)] == [T.PAYMENT_FAILED]


def test_trial_will_end_is_written_once_whatever_the_runs(catalog) -> None:
    with at(MADE, 1):
        trial = subscribing.subscribe(access.create_account("tia@example.com"), sku="TRIAL", product_name="Trial box",
                                      payment_day=10, amount=1500, currency="USD", card=card(), today=MADE,
                                      actor="customer", trial_days=14).sub
    day = date.fromisoformat(trial.TrialEnd) - timedelta(days=3)
    for minute, run_on in ((2, day - timedelta(days=1)), (3, day), (4, day), (5, day + timedelta(days=1))):
        with at(run_on, minute):
            batches.run_reminders(run_date=run_on, catch_up_days=1)
    notices = [e for e in all_events(day) if e.Type == T.SUBSCRIPTION_TRIAL_WILL_END]
    assert [(e.ObjectId, e.Data["trial_end"]) for e in notices] == [(trial.sub_id, trial.TrialEnd)]
    # Its first charge, by the payment run (from the due index's projection): activated.
    first_charge = date.fromisoformat(trial.TrialEnd) + timedelta(days=1)
    with at(first_charge, 6):
        assert batches.run_payments(run_date=first_charge, workers=1, catch_up_days=0).counts["paid"] == 1
    events = all_events(first_charge)
    [activated] = [e for e in events if e.Type == T.SUBSCRIPTION_ACTIVATED]
    assert activated.ObjectId == trial.sub_id and activated.Data["stored_status"] == SubscriptionStatus.ACTIVE
    assert [e.Type for e in events].count(T.PAYMENT_SUCCEEDED) == 1
    with at(first_charge + timedelta(days=40), 7):  # the next renewal: no second activation
        batches.run_payments(run_date=first_charge + timedelta(days=40), workers=1, catch_up_days=40)
        later, _ = access.events_after(activated.EventId, limit=1000)
    assert T.SUBSCRIPTION_ACTIVATED not in [e.Type for e in later]
    assert [e.Type for e in later].count(T.PAYMENT_SUCCEEDED) >= 1


# --- events_after ---------------------------------------------------------------------------


def made(at_time: datetime, n: int) -> MerchantEvent:
    event = access.new_merchant_event(T.SUBSCRIPTION_UPDATED, account_id="a1", object_type="subscription",
                                      object_id=f"s{n}", data={"n": n}, at=at_time)
    event.save()
    return event


def test_ids_increase_in_the_order_events_are_made_even_on_a_frozen_clock() -> None:
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        ids = [access.new_merchant_event(T.SUBSCRIPTION_UPDATED, account_id="a", object_type="subscription",
                                         object_id="s", data={}).EventId for _ in range(50)]
    assert ids == sorted(ids) and len(set(ids)) == 50


def test_events_after_reads_in_order_across_days_and_pages(table) -> None:
    late = datetime(2027, 3, 10, 23, 59, 59, 999000, tzinfo=UTC)
    moments = [late - timedelta(seconds=2), late - timedelta(seconds=1), late, late + timedelta(microseconds=2000),
               late + timedelta(hours=1), late + timedelta(days=1, hours=3)]
    # Written out of order: the reader's order is the ids', i.e. the times of the changes.
    written = [made(moments[i], i) for i in (3, 0, 5, 1, 4, 2)]
    ordered = sorted(written, key=lambda e: e.CreatedAt)
    assert [e.Data["n"] for e in ordered] == [0, 1, 2, 3, 4, 5]
    assert {e.PK for e in ordered} == {"EVT#2027-03-10", "EVT#2027-03-11", "EVT#2027-03-12"}
    with time_machine.travel(datetime(2027, 3, 13, 9, tzinfo=UTC), tick=False):
        everything, more = access.events_after(None)
        assert [e.EventId for e in everything] == [e.EventId for e in ordered] and more is None
        # Page by page, two at a time: each page continues after the last, across days.
        seen, after = [], None
        while True:
            page, after = access.events_after(after, limit=2)
            seen += page
            if after is None:
                break
        assert [e.EventId for e in seen] == [e.EventId for e in ordered]
        # After the last of the first day: the next day's.
        page, _ = access.events_after(ordered[2].EventId, limit=10)
        assert [e.Data["n"] for e in page] == [3, 4, 5]
        # ``until``: only those made before it (a reader that lets a late commit settle).
        page, more = access.events_after(ordered[0].EventId, until=moments[4])
        assert [e.Data["n"] for e in page] == [1, 2, 3] and more is None
        assert access.events_after(ordered[-1].EventId) == ([], None)
        with pytest.raises(ValueError):
            access.events_after("evt_not-an-id")


def test_events_after_is_one_query_per_day_and_never_scans(table, ddb_requests) -> None:
    made(datetime(2027, 3, 10, 8, tzinfo=UTC), 0)
    made(datetime(2027, 3, 12, 8, tzinfo=UTC), 1)
    with time_machine.travel(datetime(2027, 3, 12, 9, tzinfo=UTC), tick=False):
        first, _ = access.events_after(None, limit=1)
        ddb_requests.reset()
        page, more = access.events_after(first[0].EventId)
    assert [e.Data["n"] for e in page] == [1] and more is None
    assert ddb_requests.by_name() == Counter({"Query": 3})  # the 10th, 11th and 12th


def test_events_expire_after_the_retention(table, settings) -> None:
    settings.MERCHANT_EVENT_RETENTION_DAYS = 30
    old = made(datetime(2027, 1, 1, 8, tzinfo=UTC), 0)
    assert datetime(2027, 1, 31, 8, tzinfo=UTC) == old.TTL
    made(datetime(2027, 1, 20, 8, tzinfo=UTC), 1)
    with time_machine.travel(datetime(2027, 2, 5, tzinfo=UTC), tick=False):
        page, _ = access.events_after(None)
    assert [e.Data["n"] for e in page] == [1]  # the first is past its TTL (DynamoDB deletes it lazily)
