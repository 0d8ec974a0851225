"""The demo's second meter: the subscription billing the API calls is billed for its
storage too (docs/USAGE.md "Several metered prices"); a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access
from billing.access import usage as metered
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import prices, usage, usage_billing, usage_meters
from tests.builders import make_customer, make_subscription

pytestmark = pytest.mark.django_db


def test_the_demo_subscription_bills_its_calls_and_its_storage_once(moto_table) -> None:
    today = date(2027, 3, 10)
    assert "run the usage billing part first" in usage_meters.seed(today)[0]
    customer = make_customer(CUSTOMER_EMAIL)
    sub = make_subscription(access.get_account(customer.account_id), payment_day=10, amount=999, today=today)
    prices.seed(today)
    usage.seed(today)
    usage_billing.seed(today)
    [line] = usage_meters.seed(today)
    named = {p.Nickname: p.PriceId for p in access.list_prices("API-ACCESS")}
    assert access.get_subscription(sub.account_id, sub.sub_id).metered_price_ids == [named["API calls"],
                                                                                      named["Storage"]]
    assert "2 metered prices" in line
    assert usage_meters.seed(today) == [line]  # a second run: the same price, the same readings
    attached = [e for e in access.get_events_by_account(sub.account_id)
                if e.Action == "subscription.metered_price_attached"]
    assert len(attached) == 2
    # the month's readings: its highest, 27 GB
    meter = metered.get_meter("storage_gb")
    assert meter is not None and metered.usage_of(meter, sub.account_id, date(2027, 2, 9), date(2027, 3, 11)) == 27
    # its usage page names both meters, each a link
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        page = customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id}) + "?meter=storage_gb")
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="usage-meters"' in html
    assert 'href="?meter=api_calls"' in html and 'aria-current="page" href="?meter=storage_gb"' in html
