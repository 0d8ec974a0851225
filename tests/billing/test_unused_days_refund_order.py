"""The unused days a switch's excess credit or fewer seats give back are refunded from the
charges that paid them, newest first (billing/operations/refunds.py ``refund_unused_days``):
found as far back as the last payment however short the cadence is now, the charges paying
the same days taken in the order they were made, and a receipt recorded without its period
(as before periods were recorded) in the same months changing nothing. What is refunded,
from which charge."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.actions import prices as price_actions
from billing.actions import seats, switch
from billing.actions import subscriptions as subscribing
from billing.models import Receipt
from billing.rules.price_choice import choose_price
from billing.rules.pricing import PriceTerms
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)  # subscribed on the 10th, payment day 10


def at(day: date, hour: int = 12):
    return time_machine.travel(datetime(day.year, day.month, day.day, hour, tzinfo=UTC), tick=False)


def refunds_of(sub) -> list[tuple[str, int]]:
    return [(r["charge_id"], r["amount"]) for r in get_gateway().refunds_made()
            if r["charge_id"] in {x.ChargeId for x in receipts_of(sub)}]


def price(sku: str, amount: int, interval: str = "month") -> str:
    return price_actions.add_price(sku, PriceTerms("USD", unit_amount=Decimal(amount), interval=interval),
                                   actor="t").PriceId


def test_a_switch_after_a_yearly_plan_went_monthly_from_its_end_refunds_its_excess_from_the_year_s_charge(
        moto_table) -> None:
    # A year of News paid $240.00 on 10 March; on 1 September it goes to $10.00 a month
    # from the year's end. On 20 September News Plus ($15.00 a month) is an upgrade and
    # applies now: its price of the days to 9 March is less than what the year's charge
    # paid for them, and the difference is refunded from that charge, although the
    # monthly cadence's window (three months) no longer reaches back to it.
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 1500, "USD")
    yearly, monthly = price("NEWS", 24000, "year"), price("NEWS", 1000)
    product = access.get_product("NEWS")
    with at(MADE):
        sub = subscribing.subscribe_to_price(access.create_account("y2m-excess@example.com"), product,
                                             choose_price(access.get_price(yearly), product), payment_day=10,
                                             card=card(), today=MADE, actor="customer").sub
    [year] = receipts_of(sub)
    assert (year.ProcessedAmount, year.PeriodEnd) == (24000, "2028-03-09")
    with at(date(2027, 9, 1)):
        switch.switch(fresh(sub), monthly, today=date(2027, 9, 1), actor="customer")
    day = date(2027, 9, 20)
    with at(day):
        q = switch.quote(fresh(sub), "NEWS-PLUS", today=day)
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=day, actor="customer")
    # 172 of the year's 366 days of 240.00 paid (112.79, half up); 85.00 at the new price
    # (20 of September's period's 30 days, then five whole months)
    assert (q.upgrade, q.charge, q.credit) == (True, 8500, 11279)
    assert done.refunded == 2779
    assert refunds_of(sub) == [(year.ChargeId, 2779)]


def per_seat(sku: str, unit: int) -> str:
    return price_actions.add_price(sku, PriceTerms("USD", unit_amount=Decimal(unit), interval="month"), actor="t",
                                   unit_label="seat").PriceId


def three_seats(email: str, *, upgrade_at: int | None = None):
    """Three seats of Zine ($10.00 a seat a month) from 10 March, paid to 9 April; with
    ``upgrade_at``, switched at that hour of the same day to News ($20.00 a seat), whose
    charge pays the same days (its receipt's key sorts before Zine's)."""
    access.create_product("ZINE", "Zine", 1000, "USD")
    access.create_product("NEWS", "News", 2000, "USD")
    zine, news = per_seat("ZINE", 1000), per_seat("NEWS", 2000)
    product = access.get_product("ZINE")
    with at(MADE, 9):
        sub = subscribing.subscribe_to_price(access.create_account(email), product,
                                             choose_price(access.get_price(zine), product, 3), payment_day=10,
                                             card=card(), today=MADE, actor="customer").sub
    if upgrade_at is not None:
        with at(MADE, upgrade_at):
            assert switch.switch(fresh(sub), news, today=MADE, actor="customer").charged == 3000
    return sub


def test_fewer_seats_refund_first_the_later_of_two_charges_paying_the_same_days(moto_table) -> None:
    # The subscription's charge (09:00) and the upgrade's (15:00) both pay 10 March to
    # 9 April: one seat fewer on 25 March (16 of the 31 days left, at $20.00 a seat:
    # 10.32) is refunded from the newer charge, the upgrade's, which holds it.
    sub = three_seats("upgraded-seats@example.com", upgrade_at=15)
    [first] = [r for r in receipts_of(sub) if r.Kind is None]
    [upgrade] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert first.PeriodStart == upgrade.PeriodStart == MADE.isoformat() and upgrade.SK < first.SK
    day = date(2027, 3, 25)
    with at(day):
        done = seats.change_quantity(fresh(sub), 2, "customer", today=day)
    assert done.credited == 1032
    assert refunds_of(sub) == [(upgrade.ChargeId, 1032)]


def test_a_receipt_recorded_without_its_period_does_not_stop_fewer_seats_refunding(moto_table) -> None:
    # A receipt of the subscription dated 10 February, recorded before periods were (no
    # first or last day): it pays no day left and is passed over; one seat fewer on 25 March (16 of 31 days of $10.00)
    # is refunded from March's charge.
    sub = three_seats("legacy-seats@example.com")
    Receipt(sub.PK, Receipt.sk(billing_date="2027-02-10", sku="ZINE", sub_id=sub.sub_id), sub_id=sub.sub_id,
            SKU="ZINE", ProductName="Zine", BillingDate="2027-02-10", ProcessedDate="2027-02-10T06:00:02+00:00",
            ProcessedAmount=3000, Currency="USD", ChargeId="ch_before_periods").save()
    [march] = [r for r in receipts_of(sub) if r.PeriodStart == MADE.isoformat()]
    day = date(2027, 3, 25)
    with at(day):
        done = seats.change_quantity(fresh(sub), 2, "customer", today=day)
    assert done.credited == 516
    assert refunds_of(sub) == [(march.ChargeId, 516)]
