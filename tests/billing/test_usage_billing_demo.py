"""The demo's usage-billing part: the demo customer's monthly USD subscription bills the
prices part's metered API price in arrears; a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import prices, usage, usage_billing
from tests.builders import make_customer, make_subscription

pytestmark = pytest.mark.django_db


def test_the_demo_customer_bills_its_api_calls_once(moto_table) -> None:
    today = date(2027, 3, 10)
    assert usage_billing.seed(today)[0].startswith("usage billing: no API calls price")
    prices.seed(today)
    assert "has no live monthly USD subscription" in usage_billing.seed(today)[0]
    customer = make_customer(CUSTOMER_EMAIL)
    usage.seed(today)
    sub = make_subscription(access.get_account(customer.account_id), payment_day=10, amount=999, today=today)
    [line] = usage_billing.seed(today)
    [price] = [p for p in access.list_prices("API-ACCESS") if p.Nickname == "API calls"]
    assert price.PriceId in line and sub.sub_id in line
    assert access.get_subscription(sub.account_id, sub.sub_id).MeteredPriceId == price.PriceId
    assert usage_billing.seed(today) == [line]
    attached = [e for e in access.get_events_by_account(sub.account_id)
                if e.Action == "subscription.metered_price_attached"]
    assert len(attached) == 1
    # its usage page: its first payment is still to be taken, so no usage is billed yet
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        page = customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id}))
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="usage-none"' in html and "data-day=" not in html
