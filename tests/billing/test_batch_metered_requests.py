"""DynamoDB requests per payment of the payment run when the subscription bills metered
usage in arrears (docs/PERFORMANCE.md "Requests per payment with a metered item"): pinned,
beside a fixed-price payment's (tests/billing/test_batch_payments.py)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access, batches
from billing.access.usage import USAGE_SHARDS, get_meter
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.rules.pricing import PriceTerms
from tests.builders import card, fresh, make_account, make_subscription, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)  # the payment day: the usage of 15 February to 14 March is billed with it
PAYMENTS = 3


def _metered_subscriptions() -> list:
    meter = meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal("0.5")), actor="test",
                                    nickname="calls", meter="api_calls")
    subs = []
    for n in range(PAYMENTS):
        sub = make_subscription(make_account(f"m{n}@example.com"), sku="API", payment_day=15, amount=999,
                                today=date(2027, 2, 15))
        sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15),
                                  next_reminder=date(2027, 3, 8), last_reminder=date(2027, 2, 8))
        sub = attach_metered_price(access.replace_card(fresh(sub), card(), actor="test"), price.PriceId, actor="test")
        now = datetime(2027, 3, 14, 20, tzinfo=UTC)
        for k in range(3):  # a few calls in the period (several shards' aggregates)
            meter_actions.record_usage(get_meter(meter.EventName), customer=sub.account_id, identifier=f"c{n}-{k}",
                                       value=100 * (k + 1), timestamp=int(now.timestamp()) - 86400 * k, now=now)
        subs.append(sub)
    return subs


def test_a_payment_with_a_metered_item_costs_its_closing_and_its_usage_read(moto_table, ddb_requests) -> None:
    subs = _metered_subscriptions()
    ddb_requests.reset()
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        summary = batches.run_payments(run_date=D, workers=1, catch_up_days=0)
    ops = ddb_requests.by_name()
    assert summary.counts["paid"] == PAYMENTS
    assert [r.UsageQuantity for s in subs for r in receipts_of(s) if r.UsageStart] == [600] * PAYMENTS
    # A fixed-price payment of the run: TransactWriteItems 1 (the receipt) and UpdateItem 1
    # (the advance); the run itself: PutItem 1 + UpdateItem 1 (its record), Query 3 (the
    # due day's index page, the expired incomplete ones, the last periods' usage due of
    # subscriptions cancelled at their end) and GetItem 1 (the seller).
    # A metered item adds 19 a payment: one UpdateItem per usage shard closing the period,
    # GetItem 2 (the price, the meter) and Query 1 (the period's aggregates, consistent).
    fixed = Counter({"PutItem": 1, "TransactWriteItems": PAYMENTS, "UpdateItem": PAYMENTS + 1, "Query": 3,
                     "GetItem": 1})
    metered = Counter({"UpdateItem": USAGE_SHARDS * PAYMENTS, "GetItem": 2 * PAYMENTS, "Query": PAYMENTS})
    assert ops == fixed + metered, ops
    assert USAGE_SHARDS == 16 and (sum(ops.values()) - 6) / PAYMENTS == 2 + 19  # 21 requests a payment
