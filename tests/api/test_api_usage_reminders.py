"""The reminder and the merchant's ``invoice.upcoming`` of a subscription with a metered
price (docs/USAGE.md "Billing a period"): the amount they announce is the upcoming
payment's at the same moment (the fixed fee plus the usage so far), the e-mail's marked
as an estimate. The reminder goes the cadence's lead before the payment (7 days), the
event three days before it (``UPCOMING_INVOICE_DAYS``, Stripe's habit) with the
endpoint's own object as it then stands, written once with its claim."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import translation

from billing import access, batches
from billing.access.usage_billing import attach_metered_price
from billing.actions import lifecycle
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MerchantEventType, MeterAggregation, Subscription
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from core.mail import money_text
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.builders import at_once, card, fresh, make_account, make_subscription, receipts_of, seed_due

pytestmark = pytest.mark.django_db

PAY = date(2027, 3, 15)
REMIND = date(2027, 3, 8)
AT = datetime(2027, 3, 8, 12, tzinfo=UTC)
ANNOUNCE = date(2027, 3, 12)  # UPCOMING_INVOICE_DAYS before the payment
ANNOUNCE_AT = datetime(2027, 3, 12, 12, tzinfo=UTC)


def _metered(terms: PriceTerms | None = None):
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", terms or PriceTerms("USD", unit_amount=Decimal("0.5")), actor="test",
                                    nickname="per_unit", meter="api_calls")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=PAY, last_payment=date(2027, 2, 15), next_reminder=REMIND,
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price.PriceId, actor="test")


def _event(sub, n: int, day: date, value: int) -> dict:
    at = int(datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp())
    return {"event_name": "api_calls", "customer": sub.account_id, "identifier": f"e{n}", "value": value,
            "timestamp": at}


def _upcoming_events(sub) -> list:
    with time_machine.travel(datetime(2027, 3, 12, 23, tzinfo=UTC), tick=False):
        events, _ = access.events_after(None, limit=1000)
    return [e for e in events if e.Type == "invoice.upcoming" and e.ObjectId == sub.sub_id]


def test_the_reminder_of_a_metered_subscription_announces_the_upcoming_amount_with_its_usage(
        read_api: ApiClient, write_api: ApiClient) -> None:
    sub = _metered()
    with time_machine.travel(AT, tick=False):
        for n, (day, value) in enumerate([(date(2027, 2, 15), 200), (date(2027, 3, 1), 1035)]):
            assert write_api.post("/meter_events", _event(sub, n, day, value)).json()["status"] == "accepted"
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
        mail.outbox.clear()
        summary = batches.run_reminders(run_date=REMIND, catch_up_days=0)
    assert summary.counts["sent"] == 1
    assert shown["amount_due"] == 999 + 618  # 1,235 calls at half a cent, the demo seller's prices include tax
    [message] = mail.outbox
    amount = str(money_text(shown["amount_due"], "USD"))
    assert f"Amount: about {amount}" in message.body, message.body
    # the usage so far, named, and the day it is counted to
    assert f"it includes {money_text(618, 'USD')} for your usage so far (1235 api_calls)" in message.body
    assert "Your usage up to 14 March 2027 is added." in message.body
    html = message.alternatives[0][0]
    assert f"about {amount}" in html

    # The merchant hears of it later, three days before the payment: not yet.
    assert _upcoming_events(sub) == []
    with time_machine.travel(AT, tick=False):
        batches.run_reminders(run_date=REMIND, catch_up_days=0)
    assert len(mail.outbox) == 1


def test_the_merchant_hears_of_the_usage_three_days_before_the_payment_once(
        read_api: ApiClient, write_api: ApiClient) -> None:
    sub = _metered()
    with time_machine.travel(AT, tick=False):
        write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1035))
        batches.run_reminders(run_date=REMIND, catch_up_days=0)
    with time_machine.travel(ANNOUNCE_AT, tick=False):
        write_api.post("/meter_events", _event(sub, 2, date(2027, 3, 11), 200))  # after the reminder
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
        for _run in range(2):  # a re-run writes nothing more
            summary = batches.run_reminders(run_date=ANNOUNCE, catch_up_days=0)
            assert summary.counts["invoice_upcoming"] == (1 if _run == 0 else 0)
    # The endpoint's own object (its lines) at that moment: the usage the reminder did not know.
    [upcoming] = _upcoming_events(sub)
    assert upcoming.Type == MerchantEventType.INVOICE_UPCOMING
    assert upcoming.Data == shown and shown["amount_due"] == 999 + 618
    assert fresh(sub).UpcomingNoticeFor == PAY.isoformat()
    # The payment charges what it said (no usage came since).
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches.run_payments(run_date=PAY)
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == PAY.isoformat()]
    assert receipt.ProcessedAmount == upcoming.Data["amount_due"]


def test_the_reminder_s_usage_so_far_is_every_tier_s_line(write_api: ApiClient) -> None:
    # 1,235 calls at "$0.001 a call up to 1,000, then $0.002": 100 + 47, two usage lines
    sub = _metered(PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                              tiers=(Tier(1000, Decimal("0.1")), Tier(None, Decimal("0.2")))))
    with time_machine.travel(AT, tick=False):
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1235)).json()["status"] == "accepted"
        mail.outbox.clear()
        batches.run_reminders(run_date=REMIND, catch_up_days=0)
    [message] = mail.outbox
    assert f"it includes {money_text(147, 'USD')} for your usage so far (1235 api_calls)" in message.body
    with time_machine.travel(ANNOUNCE_AT, tick=False):
        batches.run_reminders(run_date=ANNOUNCE, catch_up_days=0)
    [upcoming] = _upcoming_events(sub)
    assert [line["quantity"] for line in upcoming.Data["lines"] if line["meter"]] == [1000, 235]


def test_only_a_metered_reminder_reads_more(table, ddb_requests) -> None:
    # Thirty fixed-price reminders cost what they did (test_batch_reminders: no read per
    # item); the metered one 4 requests more: the subscription's GetItem (its price and
    # seats), the price's and the meter's, the usage Query (4 Queries a run before it:
    # test_batch_reminders). Its claim is an UpdateItem like the others'.
    _metered()
    seed_due(30, due=PAY)
    ddb_requests.reset()
    with time_machine.travel(AT, tick=False):
        summary = batches.run_reminders(run_date=REMIND, catch_up_days=0)
    assert summary.counts["sent"] == 31
    assert ddb_requests.by_name() == Counter({"UpdateItem": 31 + 1, "PutItem": 1, "Query": 4 + 1, "GetItem": 1 + 3}), \
        ddb_requests.by_name()


def test_only_a_metered_payment_is_read_to_announce_it(table, ddb_requests) -> None:
    # Three days before the payments of thirty fixed-price subscriptions and one metered:
    # GSI-2's Query of that day names the metered one (it projects MeteredPriceId), so
    # only it is read (its GetItem, its price's, its meter's, the usage Query) and
    # announced (one TransactWriteItems of the claim and the event). The fixed-price ones
    # cost nothing: the run's own requests (4 Queries, the seller's GetItem, its record).
    _metered()
    seed_due(30, due=PAY)
    with time_machine.travel(AT, tick=False):
        batches.run_reminders(run_date=REMIND, catch_up_days=0)
    ddb_requests.reset()
    with time_machine.travel(ANNOUNCE_AT, tick=False):
        summary = batches.run_reminders(run_date=ANNOUNCE, catch_up_days=0)
    assert summary.counts["invoice_upcoming"] == 1
    assert ddb_requests.by_name() == Counter({"UpdateItem": 1, "PutItem": 1, "Query": 4 + 1, "GetItem": 1 + 3,
                                              "TransactWriteItems": 1}), ddb_requests.by_name()


def test_a_metered_subscription_cancelled_now_is_charged_its_open_period_s_usage_once(write_api: ApiClient) -> None:
    # The usage of the open period (from the last payment's period start through the
    # cancel's day) closed, then charged once with its receipt.
    sub = _metered()
    with time_machine.travel(AT, tick=False):
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1035)).json()["status"] == "accepted"
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
        late = write_api.post("/meter_events", _event(sub, 2, REMIND, 5)).json()
    assert late.get("status") != "accepted", late  # the period is closed: billed or refused, never lost
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == 518  # 1,035 calls at half a cent, rounded half up
    [receipt] = receipts_of(sub)
    assert (receipt.UsageQuantity, receipt.UsageStart, receipt.UsageEnd) == (1035, "2027-02-15", "2027-03-09")


def test_the_estimate_reads_in_the_customer_s_language(write_api: ApiClient) -> None:
    sub = access.update_subscription(_metered(), [Subscription.Language.set("it")])
    with time_machine.travel(AT, tick=False):
        write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1235))
        mail.outbox.clear()
        batches.run_reminders(run_date=REMIND, catch_up_days=0)
    [message] = mail.outbox
    with translation.override("it"):
        total, usage = str(money_text(999 + 618, "USD")), str(money_text(618, "USD"))
    assert f"circa {total}" in message.body and f"comprende {usage} per il tuo consumo" in message.body, message.body
    assert "14 marzo 2027" in message.body


@pytest.mark.local_engine
def test_four_runs_at_once_announce_the_payment_once(local_table) -> None:
    # On DynamoDB Local, four reminder runs of the day three days before the payment, at
    # once: one invoice.upcoming (the fee, and no usage so far), counted by the one run
    # whose claim won.
    sub = _metered()
    with time_machine.travel(ANNOUNCE_AT, tick=False):
        summaries = at_once(lambda: batches.run_reminders(run_date=ANNOUNCE, catch_up_days=0, workers=1), times=4)
    assert sorted(s.counts["invoice_upcoming"] for s in summaries) == [0, 0, 0, 1]
    [upcoming] = _upcoming_events(sub)
    assert upcoming.Data["amount_due"] == 999
