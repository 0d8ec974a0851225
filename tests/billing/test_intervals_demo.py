"""The demo's cadences part: the demo customer's yearly subscription, seeded once (a
second run leaves it), on moto."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import intervals as demo_intervals
from tests.builders import make_customer, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2028, 2, 29)


def test_seeds_a_yearly_subscription_once(moto_table) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        assert demo_intervals.seed(TODAY) == [
            f"intervals: no demo customer {CUSTOMER_EMAIL}: no yearly subscription seeded"]
        customer = make_customer(CUSTOMER_EMAIL)
        [line] = demo_intervals.seed(TODAY)
        assert "120.00 USD a year, next payment 2029-02-28" in line
        [sub] = [s for s in access.get_subscriptions_by_account(customer.account_id) if s.SKU == "PHOTO-PRO"]
        assert (sub.Interval, sub.IntervalAnchor, sub.PaidThroughDate) == ("year", "2028-02-29", "2029-02-27")
        assert [r.ProcessedAmount for r in receipts_of(sub)] == [12000]
        [again] = demo_intervals.seed(TODAY)
        assert "already (next payment 2029-02-28)" in again
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert "$120.00 a year" in page
