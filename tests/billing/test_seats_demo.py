"""The demo's seats part: the demo customer's team workspace at five seats, seeded once
(a second run leaves it), on moto."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import seats as demo_seats
from tests.builders import make_customer, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)


def test_seeds_five_seats_once(moto_table) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        assert demo_seats.seed(TODAY) == [f"seats: no demo customer {CUSTOMER_EMAIL}: no seats seeded"]
        customer = make_customer(CUSTOMER_EMAIL)
        [line] = demo_seats.seed(TODAY)
        assert "5 seats at 10.00 USD a seat (40.00 USD charged for the added seats)" in line
        [sub] = [s for s in access.get_subscriptions_by_account(customer.account_id) if s.SKU == "TEAM-SEATS"]
        assert (sub.Quantity, sub.UnitAmount, sub.PaymentAmount) == (5, 1000, 5000)
        assert sorted((r.Kind or "", r.ProcessedAmount) for r in receipts_of(sub)) == [("", 1000), ("seats", 4000)]
        [again] = demo_seats.seed(TODAY)
        assert "already (5 seats)" in again
        assert len([s for s in access.get_subscriptions_by_account(customer.account_id) if s.SKU == "TEAM-SEATS"]) == 1
