"""Usage billed in arrears (docs/USAGE.md "Billing a period"): a subscription with a metered
price pays, on its payment day, the next period's fixed fee and the usage of the period
just ended, in one charge. The upcoming payment read after the last event is what the
payment day charges, to the minor unit, for a per-unit and a graduated price; the period
is closed before it is read (a late event is refused) and a repeated payment charges once."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing import access, batches
from billing.access.usage import USAGE_SHARDS, billed_through
from billing.access.usage_billing import NotMetered, attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.operations import payments
from billing.rules.invoice import invoice_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.builders import card, fresh, make_account, make_subscription, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db

D = date(2027, 3, 15)  # the payment day: pays 15 March to 14 April, and the usage of 15 February to 14 March
LAST_EVENTS = datetime(2027, 3, 14, 20, tzinfo=UTC)
PAY_DAY = datetime(2027, 3, 15, 12, tzinfo=UTC)
TERMS = {
    # 1,235 calls at half a cent: 617.5, rounded half up to 618
    "per_unit": (PriceTerms("USD", unit_amount=Decimal("0.5")), 618),
    # the first 1,000 free, then 0.2 cents: 235 x 0.2 = 47
    "graduated": (PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                             tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2")))), 47),
}
TIER_UNITS = {"per_unit": [1235], "graduated": [1000, 235]}
DESCRIPTIONS = {"per_unit": ["api_calls: 1,235 units × $0.005"],
                "graduated": ["api_calls: 1,000 units free", "api_calls: 235 units × $0.002"]}
VALUES = [(date(2027, 2, 15), 200), (date(2027, 2, 28), 1000), (date(2027, 3, 14), 35)]  # 1,235 calls


def _metered(model: str):
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", TERMS[model][0], actor="test", nickname=model, meter="api_calls")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15), next_reminder=date(2027, 3, 8),
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price.PriceId, actor="test"), price


def paid_on_its_day(sub, ddb_requests) -> tuple[Counter, dict, object]:
    """``sub``'s payment taken on ``D`` (at ``PAY_DAY``): the DynamoDB requests it made,
    its one charge and its one receipt."""
    due = fresh(sub)
    ddb_requests.reset()
    with time_machine.travel(PAY_DAY, tick=False):
        outcome = payments.take_payment(due, run_date=D)
    assert outcome.status == "paid", outcome.reason
    requests = ddb_requests.by_name()
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    return requests, charge, receipt


def _event(sub, n: int, day: date, value: int) -> dict:
    at = int(datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp())
    return {"event_name": "api_calls", "customer": sub.account_id, "identifier": f"e{n}", "value": value,
            "timestamp": at}


@pytest.mark.parametrize("model", sorted(TERMS))
def test_the_upcoming_amount_after_the_last_event_is_what_the_payment_day_charges(
        model: str, read_api: ApiClient, write_api: ApiClient, ddb_requests) -> None:
    sub, price = _metered(model)
    with time_machine.travel(LAST_EVENTS, tick=False):
        for n, (day, value) in enumerate(VALUES):
            assert write_api.post("/meter_events", _event(sub, n, day, value)).json()["status"] == "accepted"
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    fixed, *usage = shown["lines"]
    # one usage line a tier of the price, its units each
    assert [(u["meter"], u["price"], u["quantity"]) for u in usage] == [("api_calls", price.PriceId, n)
                                                                        for n in TIER_UNITS[model]]
    assert sum(u["amount"] + u["tax"] for u in usage) + fixed["amount"] + fixed["tax"] == shown["amount_due"]
    expected_usage = TERMS[model][1]
    assert shown["amount_due"] == 999 + expected_usage  # the demo seller's prices include their tax

    requests, charge, receipt = paid_on_its_day(sub, ddb_requests)
    assert charge["amount"] == receipt.ProcessedAmount == shown["amount_due"]
    assert charge["metadata"]["usage_quantity"] == "1235"
    assert charge["metadata"]["usage_amount"] == str(expected_usage)
    # the receipt's usage: its quantity, amount and period
    assert (receipt.UsageMeter, receipt.UsageQuantity, receipt.UsageAmount) == ("api_calls", 1235, expected_usage)
    assert (receipt.UsageStart, receipt.UsageEnd) == ("2027-02-15", "2027-03-15")
    assert receipt.OtherUsage is None  # one meter: no other usage stored
    # the invoice's lines (the receipt page and PDF show them): the fixed fee and the usage
    # a tier a line, as the upcoming payment read just before itemised them (the same count,
    # the same amounts), summing to the invoice's totals
    document = invoice_of(receipt)
    assert document is not None
    fee, *used = document.lines
    assert (fee.net, fee.tax) == (fixed["amount"], fixed["tax"])
    assert [(u.net, u.tax) for u in used] == [(u["amount"], u["tax"]) for u in usage]
    assert [u.description for u in used] == DESCRIPTIONS[model]
    assert {(u.period_start, u.period_end) for u in used} == {("2027-02-15", "2027-03-14")}
    assert fee.gross + sum(u.gross for u in used) == receipt.ProcessedAmount
    assert fee.tax + sum(u.tax for u in used) == receipt.Tax
    # A payment without a metered item: the seller's profile (GetItem), the receipt's
    # transaction, the advance (UpdateItem). With one, 19 more: closing the period (one
    # UpdateItem per usage shard, USAGE_SHARDS), the price's and the meter's GetItems and
    # the period's strongly consistent Query.
    assert requests == Counter({"GetItem": 1 + 2, "UpdateItem": 1 + USAGE_SHARDS, "Query": 1,
                                "TransactWriteItems": 1}), requests
    assert USAGE_SHARDS == 16

    with time_machine.travel(PAY_DAY, tick=False):
        # a late event of the period billed is refused: it would never be billed
        late = write_api.post("/meter_events", _event(sub, 99, date(2027, 3, 14), 5))
        assert late.json().get("status") != "accepted", late.json()
        # the same payment again (a second process with the item it read): the same key, the
        # same closed aggregate; one charge, one receipt
        again = payments.take_payment(sub, run_date=D)
    assert again.status != "paid" or again.amount == shown["amount_due"]
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1 and len(receipts_of(sub)) == 1


def test_with_vat_added_on_top_the_usage_is_taxed_in_the_upcoming_amount_and_the_charge(
        read_api: ApiClient, write_api: ApiClient) -> None:
    # An Italian seller whose prices exclude VAT: the fee and the usage are taxed together,
    # once, in what the upcoming payment says and what the payment day charges.
    prices_exclude_vat()
    sub, _ = _metered("graduated")
    with time_machine.travel(LAST_EVENTS, tick=False):
        for n, (day, value) in enumerate(VALUES):
            write_api.post("/meter_events", _event(sub, n, day, value))
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert shown["amount_due"] == 1276  # (9.99 + 0.47) × 1.22 = 12.7612
    with time_machine.travel(PAY_DAY, tick=False):
        assert payments.take_payment(fresh(sub), run_date=D).status == "paid"
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    assert charge["amount"] == receipt.ProcessedAmount == 1276 and (receipt.Net, receipt.Tax) == (1046, 230)


def test_a_dry_run_or_a_payment_not_due_yet_leaves_the_usage_period_open(write_api: ApiClient) -> None:
    # Only the payment itself, on its day, closes the period it bills: a dry run of that
    # day and a payment asked for before its day (nothing charged) leave a late event of
    # the period welcome.
    sub, _ = _metered("graduated")
    with time_machine.travel(PAY_DAY, tick=False):
        assert payments.take_payment(fresh(sub), run_date=D, dry_run=True).status == "dry_run"
        assert payments.take_payment(fresh(sub), run_date=D - timedelta(days=1)).reason == f"not due until {D}"
        assert billed_through(sub.account_id, "api_calls") is None
        late = write_api.post("/meter_events", _event(sub, 9, date(2027, 3, 14), 5))
    assert late.json()["status"] == "accepted", late.content


def test_attaching_a_metered_price_is_audited_and_refuses_a_price_without_a_meter(moto_table) -> None:
    sub, price = _metered("per_unit")
    [event] = [e for e in access.get_events_by_account(sub.account_id)
               if e.Action == "subscription.metered_price_attached"]
    assert event.After["MeteredPriceId"] == price.PriceId and fresh(sub).MeteredPriceId == price.PriceId
    flat = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(999)), actor="test", nickname="flat")
    with pytest.raises(NotMetered):
        attach_metered_price(fresh(sub), flat.PriceId, actor="test")


def test_the_payment_run_bills_the_usage_of_a_subscription_read_from_its_index(
        read_api: ApiClient, write_api: ApiClient) -> None:
    # The run reads due subscriptions from GSI-2: MeteredPriceId must be projected there.
    sub, _ = _metered("graduated")
    with time_machine.travel(LAST_EVENTS, tick=False):
        for n, (day, value) in enumerate(VALUES):
            write_api.post("/meter_events", _event(sub, n, day, value))
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    with time_machine.travel(PAY_DAY, tick=False):
        summary = batches.run_payments(run_date=D, workers=1, catch_up_days=0)
    assert summary.counts["paid"] == 1
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == shown["amount_due"] == 999 + 47
    assert fresh(sub).NextPaymentDate == "2027-04-15"
