"""Fewer seats when the seller's prices exclude VAT (docs/MONEY.md M7): the credit is the
removed seats' days as they were charged, tax included, so adding seats and removing them
again the same day nets to nothing; the confirm page shows what is refunded. Found by the
pricing money model (tests/billing/test_money_model_pricing.py): the credit was the price
before tax, so the customer kept paying the tax of seats they no longer had."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine

from billing import access
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from tests.builders import card, fresh, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE, MID = date(2027, 3, 10), date(2027, 3, 25)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def test_seats_added_and_removed_the_same_day_refund_what_was_charged_with_its_tax(moto_table) -> None:
    prices_exclude_vat()
    access.create_product("TEAM", "Team", 1000, "EUR")
    with at(MADE):
        sub = subscribing.subscribe(access.create_account("vat-seats@example.com"), sku="TEAM", product_name="Team",
                                    payment_day=10, amount=1000, currency="EUR", card=card(), today=MADE,
                                    actor="customer").sub
    with at(MID):
        more = seats.change_quantity(fresh(sub), 4, "customer", today=MID)
        assert more.charged == 1889  # 3 seats x 10.00 x 16/31 = 15.48 (rounded half up) + 22% VAT
        quote = seats.quote(fresh(sub), 1, today=MID)
        assert seats.credited_now(fresh(sub), quote) == 1889 and quote.credit_now == 1548
        fewer = seats.change_quantity(fresh(sub), 1, "customer", today=MID, expected_amount=1889)
    assert fewer.credited == more.charged  # nets to nothing, its tax too
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats"]
    assert receipt.ProcessedAmount == receipt.RefundedAmount == 1889
