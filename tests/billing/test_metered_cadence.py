"""A metered price's usage is billed with the payments of a fixed price of its own cadence
only (rules/price_choice.py ``bills_with``; Stripe requires one interval of a
subscription's items): its tiers count one of its periods' usage, so "first 1,000 calls a
month free" billed with a yearly payment would give a year's usage the month's allowance.
Refused by the API before anything is charged (tests/api/test_api_subscribe_price.py), by ``attach_metered_price``, and not offered
beside a fixed price of another cadence in the portal."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access.usage_billing import NotMetered, attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.rules.price_choice import bills_with, metered_prices_of
from billing.rules.pricing import PriceTerms
from tests.builders import GOOD_CARD, fresh, make_account, make_subscription, receipts_of

pytestmark = pytest.mark.django_db

QUOTE = re.compile(r'name="quote" value="([^"]+)"')


@pytest.fixture
def catalog(moto_table):
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    yearly = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(9900), interval="year"),
                                     actor="test", nickname="yearly")
    monthly_usage = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal("0.5")), actor="test",
                                            nickname="calls", unit_label="call", meter="api_calls")
    return yearly, monthly_usage


def test_a_metered_price_bills_with_its_own_cadence_only(catalog) -> None:
    yearly, monthly_usage = catalog
    assert bills_with(monthly_usage, None, None) and bills_with(monthly_usage, "month", 1)
    assert not bills_with(monthly_usage, "year", 1) and not bills_with(monthly_usage, "month", 3)
    prices = access.list_prices("API")
    assert [p.PriceId for p in metered_prices_of(prices, "USD")] == [monthly_usage.PriceId]
    assert metered_prices_of(prices, "usd", "year", 1) == []


def test_attaching_one_of_another_cadence_is_refused(catalog) -> None:
    _yearly, monthly_usage = catalog
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=9900, today=date(2027, 2, 15))
    sub.update(actions=[type(sub).Interval.set("year"), type(sub).IntervalCount.set(1)])
    with pytest.raises(NotMetered, match="every 1 month, the subscription every 1 year"):
        attach_metered_price(fresh(sub), monthly_usage.PriceId, actor="test")
    assert fresh(sub).MeteredPriceId is None


@pytest.fixture
def travel():
    # Before the customer logs in: a session made before the travel would have expired.
    with time_machine.travel(datetime(2027, 2, 15, 12, tzinfo=UTC), tick=False):
        yield


def test_the_portal_offers_the_usage_beside_the_monthly_price_only(travel, customer, catalog) -> None:
    yearly, _monthly_usage = catalog
    offers = dict(customer.client.get("/subscribe/?product=API").context["form"].fields["price"].choices)
    assert "plus usage" not in str(offers[yearly.PriceId])
    step = customer.client.post("/subscribe/", {"product": "API", "price": yearly.PriceId, "payment_day": "15",
                                                **GOOD_CARD})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert "billed in arrears" not in html
    assert customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]}).status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.Interval, sub.MeteredPriceId) == ("year", None)
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [9900]
