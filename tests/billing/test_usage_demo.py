"""The demo's usage part: a meter and a month of the demo customer's calls; a second run
adds nothing."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from billing.access import usage as metered
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import usage
from tests.builders import make_customer

pytestmark = pytest.mark.django_db


def test_seeds_a_month_once(moto_table) -> None:
    today = date(2027, 3, 10)
    assert usage.seed(today) == [f"usage: no demo customer {CUSTOMER_EMAIL}: no usage seeded"]
    customer = make_customer(CUSTOMER_EMAIL)
    [line] = usage.seed(today)
    assert line.startswith(f"usage: meter api_calls (sum); 90 events of 30 days for {CUSTOMER_EMAIL}")
    month = metered.usage_for_period(customer.account_id, "api_calls", today - timedelta(days=29),
                                     today + timedelta(days=1))
    aggregates = metered.day_aggregates(customer.account_id, "api_calls", today - timedelta(days=29),
                                        today + timedelta(days=1))
    assert sum(int(a.Events) for a in aggregates) == 90 and 90 * 40 <= month <= 90 * 400
    [again] = usage.seed(today)
    assert " 0 events of 30 days" in again
    assert metered.usage_for_period(customer.account_id, "api_calls", today - timedelta(days=29),
                                    today + timedelta(days=1)) == month
