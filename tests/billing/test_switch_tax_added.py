"""A switch when the seller's prices exclude VAT: the credit for the unused paid days and
the new price are counted on one footing, before tax (each receipt's net share), and the
tax is added once, to what is charged now or to the excess credit refunded now, as those
days were charged (docs/MONEY.md, "Switching price or cadence"). Counting the credit with
its tax against a price before tax under-charged an upgrade by the credit's tax and
refunded the new period's tax with an excess credit."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from billing.actions.seller import change_seller_profile
from billing.rules.pricing import PriceTerms
from tests.builders import card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE, MID = date(2027, 3, 10), date(2027, 3, 25)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def test_the_excess_credit_of_a_switch_is_refunded_with_the_tax_it_was_charged(moto_table) -> None:
    change_seller_profile(access.get_seller_profile(), legal_name="Rpay S.r.l.", address="Via Roma 1",
                          country="IT", vat_number="IT00743110157", oss_registered=True, under_threshold=False,
                          prices_include_tax=False, registrations={}, actor="test")
    access.create_product("BIG", "Big plan", 10000, "EUR")
    access.create_product("SMALL", "Small plan", 100, "EUR")
    yearly = price_actions.add_price("SMALL", PriceTerms("EUR", unit_amount=Decimal(1200), interval="year"),
                                     actor="test", nickname="Yearly")
    with at(MADE):
        sub = subscribing.subscribe(access.create_account("vat-switch@example.com"), sku="BIG", product_name="Big plan",
                                    payment_day=10, amount=10000, currency="EUR", card=card(), today=MADE,
                                    actor="customer").sub
    [first] = receipts_of(sub)
    assert first.ProcessedAmount == 12200  # 100.00 + 22% VAT
    with at(MID):
        q = switch.quote(fresh(sub), yearly.PriceId, today=MID)
        # 16 of March's 31 days unused: 51.61 of credit against a year at 12.00, before tax.
        assert (q.credit, q.refund_now) == (5161, 3961)
        assert switch.refunded_now(fresh(sub), q) == 4832  # 39.61 + 22% VAT, as those days were charged
        done = switch.switch(fresh(sub), yearly.PriceId, today=MID, actor="customer", expected=q)
    assert done.refunded == 4832
    [first] = [r for r in receipts_of(sub) if r.SK == first.SK]
    assert first.RefundedAmount == 4832
