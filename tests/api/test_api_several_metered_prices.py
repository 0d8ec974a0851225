"""A subscription billed for several meters (docs/USAGE.md "Several metered prices"): a
fixed fee, API calls by graduated tiers and storage per unit, as Stripe's subscription of
several items. One payment bills every meter's usage of the period just ended: one
charge, one invoice with a line a tier of each price, the tax computed once on the whole
and shared over the lines. The upcoming payment read after the last event is what the
payment day charges, line for line; the charge's metadata and the receipt record each
meter's usage, so a charge recorded by another path (the reconciliation) itemises alike."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.access.receipts import build_receipt
from billing.access.usage import USAGE_SHARDS, billed_through
from billing.access.usage_billing import NotMetered, attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.operations import payments
from billing.operations.final_usage import bill_final_usage
from billing.operations.metered import priced_usage, usage_priced
from billing.rules.api_objects import items_of
from billing.rules.invoice import invoice_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.rules.usage_metadata import MAX_METERED_PRICES, usage_metadata, usage_records
from billing.views.lifecycle_pages import usage_if_cancelled_now
from billing.views.manage_pages import _usage
from core.mail import money_text
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.api.test_api_usage_billing import LAST_EVENTS, PAY_DAY, D, paid_on_its_day
from tests.builders import (
    card,
    fresh,
    make_account,
    make_customer,
    make_subscription,
    prices_exclude_vat,
    receipts_of,
)

pytestmark = pytest.mark.django_db

# D (15 March 2027) pays 15 March to 14 April, and the usage of 15 February to 14 March
# the first 1,000 calls free, then 0.2 cents: 235 x 0.2 = 47
CALLS = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                   tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"))))
STORAGE = PriceTerms("USD", unit_amount=Decimal(10))  # 10 cents a GB: 30 GB, 300
EVENTS = [("api_calls", date(2027, 2, 15), 200), ("api_calls", date(2027, 2, 28), 1000),
          ("storage_gb", date(2027, 3, 1), 30), ("api_calls", date(2027, 3, 14), 35)]


def two_meters(account=None):
    """A subscription (of ``account``, default a new one) to a fee and two metered prices,
    due on ``D``; with its two prices."""
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    calls = price_actions.add_price("API", CALLS, actor="test", nickname="calls", meter="api_calls")
    storage = price_actions.add_price("API", STORAGE, actor="test", nickname="storage", meter="storage_gb")
    sub = make_subscription(account or make_account(), sku="API", payment_day=15, amount=999,
                            today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15), next_reminder=date(2027, 3, 8),
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    sub = attach_metered_price(fresh(sub), calls.PriceId, actor="test")
    return attach_metered_price(sub, storage.PriceId, actor="test"), calls, storage


def send_events(write_api: ApiClient, sub, events: list | None = None, *, prefix: str = "e") -> None:
    """``events`` (default ``EVENTS``), each accepted; identifiers ``<prefix><n>``."""
    for n, (name, day, value) in enumerate(EVENTS if events is None else events):
        at = int(datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp())
        answer = write_api.post("/meter_events", {"event_name": name, "customer": sub.account_id,
                                                  "identifier": f"{prefix}{n}", "value": value, "timestamp": at})
        assert answer.json()["status"] == "accepted", answer.content


@pytest.mark.parametrize("vat_on_top", [False, True], ids=["prices-include-vat", "vat-on-top"])
def test_one_charge_bills_each_meter_as_the_upcoming_payment_said_line_for_line(
        vat_on_top: bool, read_api: ApiClient, write_api: ApiClient, ddb_requests) -> None:
    if vat_on_top:
        prices_exclude_vat()
    sub, calls, storage = two_meters()
    assert fresh(sub).metered_price_ids == [calls.PriceId, storage.PriceId]
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    fee, *usage = shown["lines"]
    # a line a tier of the calls' price, then the storage's line, each naming its price and meter
    assert [(u["meter"], u["price"], u["quantity"]) for u in usage] == [
        ("api_calls", calls.PriceId, 1000), ("api_calls", calls.PriceId, 235), ("storage_gb", storage.PriceId, 30)]
    assert [u["amount"] + (u["tax"] if not vat_on_top else 0) for u in usage] == [0, 47, 300]
    assert fee["amount"] + fee["tax"] + sum(u["amount"] + u["tax"] for u in usage) == shown["amount_due"]
    price = 999 + 47 + 300
    # the demo seller's prices include their tax; an Italian seller's exclude it: 22% on top
    assert shown["amount_due"] == (price if not vat_on_top else price + (price * 22 + 50) // 100)

    requests, charge, receipt = paid_on_its_day(sub, ddb_requests)
    assert charge["amount"] == receipt.ProcessedAmount == shown["amount_due"]
    # the charge carries each meter's usage, recorded as charged
    assert usage_records(charge["metadata"]) == [
        {"price": calls.PriceId, "meter": "api_calls", "quantity": "1235", "amount": "47"},
        {"price": storage.PriceId, "meter": "storage_gb", "quantity": "30", "amount": "300"}]
    assert (receipt.UsageMeter, receipt.UsageQuantity, receipt.UsageAmount) == ("api_calls", 1235, 47)
    assert [(u.PriceId, u.Meter, u.Quantity, u.Amount) for u in receipt.OtherUsage] == [
        (storage.PriceId, "storage_gb", 30, 300)]
    # the invoice is the upcoming payment's lines: the same amounts and taxes, summing to its totals
    document = invoice_of(receipt)
    assert document is not None
    paid_fee, *used = document.lines
    assert (paid_fee.net, paid_fee.tax) == (fee["amount"], fee["tax"])
    assert [(u.net, u.tax) for u in used] == [(u["amount"], u["tax"]) for u in usage]
    assert [u.description for u in used] == ["api_calls: 1,000 units free", "api_calls: 235 units × $0.002",
                                             "storage_gb: 30 units × $0.10"]
    assert paid_fee.gross + sum(u.gross for u in used) == receipt.ProcessedAmount
    assert paid_fee.tax + sum(u.tax for u in used) == receipt.Tax
    # each meter's period is closed: a late event of it is refused
    assert billed_through(sub.account_id, "api_calls") == billed_through(sub.account_id, "storage_gb") == \
        (D - timedelta(days=1)).isoformat()
    # a fixed price's payment (the seller's GetItem, the receipt's transaction, the advance),
    # and per metered price its closing (an UpdateItem per usage shard), the price's and the
    # meter's GetItems and the period's Query
    assert requests == Counter({"GetItem": 1 + 2 * 2, "UpdateItem": 1 + 2 * USAGE_SHARDS, "Query": 2,
                                "TransactWriteItems": 1}), requests


def test_a_charge_s_metadata_prices_each_meter_again_as_it_was_charged(write_api: ApiClient) -> None:
    # The reconciliation (or a webhook) records a charge it did not make: each price is read
    # again by its metadata, so its receipt is itemised from the same usage as the run's.
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
    with time_machine.travel(PAY_DAY, tick=False):
        charge = payments.next_charge(fresh(sub), seller=access.tax_terms(sub).seller, close=True)
        priced = usage_priced(usage_metadata(charge.usages))
    assert priced == charge.usages


def test_a_cancel_now_bills_every_meter_s_usage_in_one_charge(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        done = bill_final_usage(fresh(sub), last_day=date(2027, 3, 14), actor="test")
    assert done.receipt is not None and done.declined is None
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == done.receipt.ProcessedAmount == 47 + 300
    document = invoice_of(done.receipt)
    assert document is not None
    # usage alone: no fee line, the calls' tiers and the storage
    assert [(line.description, line.gross) for line in document.lines] == [
        ("api_calls: 1,000 units free", 0), ("api_calls: 235 units × $0.002", 47), ("storage_gb: 30 units × $0.10", 300)]


def test_attaching_refuses_a_meter_billed_already_and_one_price_too_many(moto_table) -> None:
    sub, calls, storage = two_meters()
    assert attach_metered_price(sub, calls.PriceId, actor="test").Version == sub.Version  # named already: no write
    again = price_actions.add_price("API", STORAGE, actor="test", meter="storage_gb")
    with pytest.raises(NotMetered, match="storage_gb already"):
        attach_metered_price(sub, again.PriceId, actor="test")
    for n in range(MAX_METERED_PRICES - 2):
        meter_actions.add_meter(f"extra_{n}", "Extra", MeterAggregation.COUNT, actor="test")
        extra = price_actions.add_price("API", STORAGE, actor="test", meter=f"extra_{n}")
        sub = attach_metered_price(sub, extra.PriceId, actor="test")
    meter_actions.add_meter("one_too_many", "Extra", MeterAggregation.COUNT, actor="test")
    extra = price_actions.add_price("API", STORAGE, actor="test", meter="one_too_many")
    with pytest.raises(NotMetered, match=f"{MAX_METERED_PRICES} metered prices at most"):
        attach_metered_price(sub, extra.PriceId, actor="test")
    assert len(fresh(sub).metered_price_ids) == MAX_METERED_PRICES
    # the API's items name each metered price, in order, as Stripe's metered items
    assert [item["price"] for item in items_of(fresh(sub), date(2027, 3, 1))][1:] == fresh(sub).metered_price_ids


def test_the_api_subscribes_to_a_fixed_price_and_two_metered_ones(write_api: ApiClient) -> None:
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    fixed = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(999)), actor="test")
    calls = price_actions.add_price("API", CALLS, actor="test", meter="api_calls")
    storage = price_actions.add_price("API", STORAGE, actor="test", meter="storage_gb")
    customer = make_customer("buyer@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    response = write_api.post("/subscriptions", {"customer": customer.account_id, "items": [
        {"price": fixed.PriceId}, {"price": calls.PriceId}, {"price": storage.PriceId}]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert [item["price"] for item in body["items"]] == [fixed.PriceId, calls.PriceId, storage.PriceId]
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.metered_price_ids == [calls.PriceId, storage.PriceId]
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [999]  # the first payment bills no usage


def test_without_its_prices_each_meter_is_one_line_its_tax_shared(moto_table) -> None:
    # A charge recorded after a price was removed: no tiers to show, a line a meter, the
    # invoice's tax shared over them in proportion to their amounts, summing to its totals.
    sub, calls, storage = two_meters()
    metadata = {"usage_start": "2027-02-15", "usage_end": "2027-03-15", "usage_price": calls.PriceId,
                "usage_meter": "api_calls", "usage_quantity": "1235", "usage_amount": "47",
                "usage2_price": storage.PriceId, "usage2_meter": "storage_gb", "usage2_quantity": "30",
                "usage2_amount": "300"}
    tax = access.invoice_tax(fresh(sub), amount=1346, on=D)  # the demo seller's prices include their tax
    receipt, _, event = build_receipt(fresh(sub), number="R-2027-000001", billing_date=D, amount=1346,
                                             currency="USD", charge_id="ch_1", retention_days=200,
                                             period_end=date(2027, 4, 14), tax=tax, usage=metadata)
    fee, *used = receipt.TaxLines
    assert [line.Description for line in used] == ["api_calls × 1235", "storage_gb × 30"]
    assert [int(line.Gross) for line in used] == [47, 300]
    assert sum(int(line.Gross) for line in receipt.TaxLines) == receipt.ProcessedAmount
    assert sum(int(line.Tax) for line in receipt.TaxLines) == receipt.Tax
    assert event.After["UsageNet"] == sum(int(line.Net) for line in used)


def test_the_api_adds_a_metered_price_to_a_live_subscription(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    meter_actions.add_meter("seats_active", "Active users", MeterAggregation.UNIQUE_COUNT, actor="test")
    active = price_actions.add_price("API", STORAGE, actor="test", meter="seats_active")
    path = f"/subscriptions/{sub.sub_id}/items"
    added = write_api.post(path, {"price": active.PriceId}, key="item-1")
    assert added.status_code == 200, added.content
    assert [item["price"] for item in added.json()["items"]][1:] == [calls.PriceId, storage.PriceId, active.PriceId]
    assert fresh(sub).metered_price_ids == [calls.PriceId, storage.PriceId, active.PriceId]
    # the merchant hears of it: subscription.updated, carrying the subscription as the API shows it
    updates = [e for e in access.events_after(None, limit=1000)[0]
               if e.Type == "subscription.updated" and e.ObjectId == sub.sub_id]
    assert updates[-1].Data["items"] == added.json()["items"]
    # named already: the subscription as it is, nothing written
    version = fresh(sub).Version
    assert write_api.post(path, {"price": calls.PriceId}, key="item-2").status_code == 200
    assert fresh(sub).Version == version
    fixed = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(999)), actor="test")
    refused = write_api.post(path, {"price": fixed.PriceId}, key="item-3")
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "price", refused.content
    twice = price_actions.add_price("API", STORAGE, actor="test", meter="storage_gb")
    refused = write_api.post(path, {"price": twice.PriceId}, key="item-4")
    assert refused.status_code == 400 and "storage_gb already" in refused.json()["error"]["message"]
    access.cancel_subscription(fresh(sub), reason="test", actor="test")
    ended = write_api.post(path, {"price": twice.PriceId}, key="item-5")
    assert ended.status_code == 409 and ended.json()["error"]["type"] == "invalid_state"


def test_metered_items_alone_subscribe_to_each_meter_s_usage(write_api: ApiClient) -> None:
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    calls = price_actions.add_price("API", CALLS, actor="test", meter="api_calls")
    storage = price_actions.add_price("API", STORAGE, actor="test", meter="storage_gb")
    customer = make_customer("payg@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    response = write_api.post("/subscriptions", {"customer": customer.account_id, "items": [
        {"price": calls.PriceId}, {"price": storage.PriceId}]})
    assert response.status_code == 201, response.content
    # no fixed fee: the first is the price subscribed to, the second billed beside it
    assert [item["price"] for item in response.json()["items"]] == [calls.PriceId, storage.PriceId]
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert int(sub.PaymentAmount) == 0 and sub.metered_price_ids == [calls.PriceId, storage.PriceId]
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [0]


def test_the_reminder_and_invoice_upcoming_announce_every_meter_as_the_upcoming_payment(
        read_api: ApiClient, write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(datetime(2027, 3, 8, 12, tzinfo=UTC), tick=False):
        send_events(write_api, sub, EVENTS[:3])  # by 8 March: 1,200 calls and 30 GB
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
        mail.outbox.clear()
        assert batches.run_reminders(run_date=date(2027, 3, 8), catch_up_days=0).counts["sent"] == 1
        page = _usage(fresh(sub))  # the subscription page's estimate
    # the first 1,000 calls free, 200 at 0.2 cents: 40; 30 GB at 10 cents: 300
    assert shown["amount_due"] == 999 + 40 + 300
    [message] = mail.outbox
    assert f"Amount: about {money_text(shown['amount_due'], 'USD')}" in message.body, message.body
    assert f"it includes {money_text(340, 'USD')} for your usage so far (1200 api_calls, 30 storage_gb)" \
        in message.body
    assert page is not None and page["usage_used"] == "1200 api_calls, 30 storage_gb"
    assert (page["usage_amount"], page["estimate"]) == ("$3.40", "about $13.39")
    # the merchant's invoice.upcoming, three days before: the endpoint's object then, both meters' lines
    with time_machine.travel(datetime(2027, 3, 12, 12, tzinfo=UTC), tick=False):
        assert batches.run_reminders(run_date=date(2027, 3, 12), catch_up_days=0).counts["invoice_upcoming"] == 1
        [event] = [e for e in access.events_after(None, limit=1000)[0]
                   if e.Type == "invoice.upcoming" and e.ObjectId == sub.sub_id]
        now = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert event.Data == now
    assert [line["meter"] for line in now["lines"]] == [None, "api_calls", "api_calls", "storage_gb"]


def test_a_metered_price_gone_from_the_catalog_is_passed_over_and_the_others_billed(write_api: ApiClient) -> None:
    # A price item removed by hand (prices are archived, never deleted, by rpay itself): the
    # other meters are still billed; nothing fails.
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        both = payments.next_charge(fresh(sub))
        access.get_price(calls.PriceId).delete()
        charge = payments.next_charge(fresh(sub))
    assert [(u.meter, u.quantity, u.amount) for u in charge.usages] == [("storage_gb", 30, 300)]
    assert charge.amount == 999 + 300
    # a charge that billed it, recorded from its metadata: no tiers to read, a line a meter
    assert usage_priced(usage_metadata(both.usages)) == ()


def test_a_cancel_of_nothing_used_charges_nothing_and_reading_it_closes_nothing(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        # the cancel page's amount, read: nothing used, nothing to charge, no day closed
        assert usage_if_cancelled_now(fresh(sub), date(2027, 3, 14)) == 0
        assert billed_through(sub.account_id, "api_calls") is None
        assert billed_through(sub.account_id, "storage_gb") is None
        # a cancel now of nothing used: no charge, no receipt (each period closed all the same)
        assert bill_final_usage(fresh(sub), last_day=date(2027, 3, 14), actor="test").receipt is None
    assert get_gateway().charges_made(sub_id=sub.sub_id) == [] and receipts_of(sub) == []
    assert billed_through(sub.account_id, "storage_gb") == "2027-03-14"


def test_a_meter_of_which_nothing_was_used_keeps_its_line_of_nothing(read_api: ApiClient, write_api: ApiClient,
                                                                   ddb_requests) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub, EVENTS[2:3])  # the storage only: no call
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    _, charge, receipt = paid_on_its_day(sub, ddb_requests)
    assert charge["amount"] == shown["amount_due"] == 999 + 300
    assert (receipt.UsageQuantity, receipt.UsageAmount) == (0, 0)
    document = invoice_of(receipt)
    assert document is not None
    # no tier of the calls entered: their one line at 0 (the invoice still names the meter), then the storage
    assert [(line.description, line.gross) for line in document.lines[1:]] == [
        ("api_calls × 0", 0), ("storage_gb: 30 units × $0.10", 300)]
    # the upcoming payment said the same, line for line
    assert [(u["meter"], u["quantity"], u["amount"] + u["tax"]) for u in shown["lines"][1:]] == [
        ("api_calls", 0, 0), ("storage_gb", 30, 300)]


def test_usage_priced_at_other_quantities_than_charged_is_a_line_a_meter_as_charged(moto_table) -> None:
    # The lines name what the charge recorded: usage priced otherwise (the same amounts, other
    # quantities: both within the free tier) is not itemised by its tiers.
    sub, calls, storage = two_meters()
    metadata = {"usage_start": "2027-02-15", "usage_end": "2027-03-15", "usage_price": calls.PriceId,
                "usage_meter": "api_calls", "usage_quantity": "950", "usage_amount": "0"}
    priced = (priced_usage(calls, date(2027, 2, 15), D, 900),)
    assert priced[0].amount == 0
    tax = access.invoice_tax(fresh(sub), amount=999, on=D)
    receipt, _, _ = build_receipt(fresh(sub), number="R-2027-000001", billing_date=D, amount=999, currency="USD",
                                  charge_id="ch_1", retention_days=200, period_end=date(2027, 4, 14), tax=tax,
                                  usage=metadata, priced=priced)
    assert [(line.Description, line.UsageUnits) for line in receipt.TaxLines[1:]] == [("api_calls × 950", None)]


def test_an_item_read_from_the_reminders_index_is_charged_every_meter(write_api: ApiClient, ddb_requests) -> None:
    # GSI-1 projects MeteredPriceId, not LastPaymentDate nor the other meters: a subscription
    # read from it is read whole (its GetItem) before its usage is priced, so no meter is left out.
    sub, calls, storage = two_meters()
    with time_machine.travel(datetime(2027, 3, 8, 12, tzinfo=UTC), tick=False):
        send_events(write_api, sub, EVENTS[:3])
        [indexed] = access.get_due_reminders_by_date(date(2027, 3, 8))
        assert indexed.LastPaymentDate is None and not indexed.OtherMeteredPriceIds
        seller = access.tax_terms(indexed).seller
        ddb_requests.reset()
        charge = payments.next_charge(indexed, seller=seller, first=False)
    # the subscription, then each price, its meter and its usage
    assert ddb_requests.by_name() == Counter({"GetItem": 1 + 2 * 2, "Query": 2}), ddb_requests.by_name()
    assert [(u.meter, u.quantity, u.start) for u in charge.usages] == [
        ("api_calls", 1200, date(2027, 2, 15)), ("storage_gb", 30, date(2027, 2, 15))]
