"""A subscription of several seats switches price keeping its seats (docs/MONEY.md
"Switching price or cadence", several seats): the action's write, its charge's receipt
and the merchant's event, a renewal at the new price for the seats, the refusals, and
the portal's and staff's pages (what the confirm page shows is what is charged). On moto;
time by time-machine."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

import pytest
import time_machine

from billing import access, batches
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from billing.models import MerchantEventType, Subscription
from billing.rules.price_choice import choose_price
from billing.rules.pricing import PriceTerms
from billing.rules.schedule import period_amount
from billing.rules.switch import SwitchRefused
from core.money import format_with_symbol
from core.payments.gateway import get_gateway
from tests.builders import PASSWORD, card, fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

MADE = date(2027, 3, 10)  # paid 10 March .. 9 April (31 days)
MID = date(2027, 3, 25)  # 16 of them left
SEATS = 5


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def per_seat(sku: str, unit: int, interval: str = "month", *, low: int | None = None, high: int | None = None) -> str:
    return price_actions.add_price(sku, PriceTerms("USD", unit_amount=Decimal(unit), interval=interval), actor="t",
                                   unit_label="seat", min_quantity=low, max_quantity=high).PriceId


def catalog() -> dict[str, str]:
    """Team: $10.00 a seat a month or $100.00 a seat a year; Team Plus: $20.00 a seat a
    month, or at most 4 seats at $30.00; Solo: one subscription, not by the seat."""
    access.create_product("TEAM", "Team", 1000, "USD")
    access.create_product("PLUS", "Team Plus", 2000, "USD")
    access.create_product("SOLO", "Solo", 5000, "USD")
    return {"monthly": per_seat("TEAM", 1000), "yearly": per_seat("TEAM", 10000, "year"),
            "plus": per_seat("PLUS", 2000), "small": per_seat("PLUS", 3000, high=4)}


def team(email: str, price_id: str, seats: int = SEATS) -> Subscription:
    product = access.get_product("TEAM")
    with at(MADE):
        started = subscribing.subscribe_to_price(access.create_account(email), product,
                                                 choose_price(access.get_price(price_id), product, seats),
                                                 payment_day=10, card=card(), today=MADE, actor="customer")
    assert started.started
    return fresh(started.sub)


def switch_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]


def test_five_seats_to_a_dearer_seat_keep_five_and_the_receipt_names_them(moto_table) -> None:
    prices = catalog()
    sub = team("five@example.com", prices["monthly"])
    assert (sub.PaymentAmount, sub.Quantity, sub.UnitAmount) == (5000, 5, 1000)
    with at(MID):
        q = switch.quote(sub, prices["plus"], today=MID)
        charge, credit = period_amount(10000, 10, MID, date(2027, 4, 9)), period_amount(5000, 10, MID,
                                                                                          date(2027, 4, 9))
        assert (q.upgrade, q.new_price, q.quantity, q.unit_amount, q.charge, q.credit) == (
            True, 10000, 5, 2000, charge, credit)
        done = switch.switch(fresh(sub), prices["plus"], today=MID, actor="customer", expected=q)
    assert done.charged == charge - credit == 2580
    after = fresh(sub)
    assert (after.SKU, after.PriceId, after.PaymentAmount, after.Quantity, after.UnitAmount) == (
        "PLUS", prices["plus"], 10000, 5, 2000)
    [paid] = switch_charges(sub)
    assert (paid["metadata"]["quantity"], paid["metadata"]["unit_amount"], paid["amount"]) == ("5", "2000", 2580)
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert (receipt.ProcessedAmount, receipt.SwitchCharge, receipt.SwitchCredit) == (2580, charge, credit)
    with at(MID):
        events, _more = access.events_after(None, limit=1000)
    [told] = [e for e in events if e.Type == MerchantEventType.SUBSCRIPTION_SWITCHED and e.AccountId == sub.account_id]
    assert told.Data["items"] == [{"price": prices["plus"], "quantity": 5}] and told.Data["quantity"] == 5
    renew = date(2027, 4, 10)
    with at(renew):  # the next payment: five seats at the new price
        batches.run_payments(run_date=renew, workers=1)
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == renew.isoformat()] == [10000]


def test_five_seats_monthly_to_yearly_charge_a_year_of_five_less_the_unused_days(moto_table) -> None:
    prices = catalog()
    sub = team("yearly@example.com", prices["monthly"])
    with at(MID):
        q = switch.quote(sub, prices["yearly"], today=MID)
        done = switch.switch(fresh(sub), prices["yearly"], today=MID, actor="customer", expected=q)
    unused = period_amount(5000, 10, MID, date(2027, 4, 9))
    assert (q.restarts, q.charge, q.credit, done.charged) == (True, 50000, unused, 50000 - unused)
    after = fresh(sub)
    assert (after.PaymentAmount, after.Quantity, after.UnitAmount, after.Interval, after.PaidThroughDate) == (
        50000, 5, 10000, "year", "2028-03-24")


def test_the_seats_must_fit_the_new_price(moto_table) -> None:
    prices = catalog()
    sub = team("fit@example.com", prices["monthly"])
    with at(MID):
        with pytest.raises(SwitchRefused, match="at most 4 seats: the subscription has 5"):
            switch.quote(sub, prices["small"], today=MID)
        with pytest.raises(SwitchRefused, match="not sold by the seat: change to one seat first"):
            switch.quote(sub, "SOLO", today=MID)
        offered = {t.price_id for t in switch.targets(sub)}
    assert prices["plus"] in offered and prices["yearly"] in offered
    assert prices["small"] not in offered and "price_default_SOLO" not in offered  # only prices that take 5 seats
    assert not switch_charges(sub) and fresh(sub).Quantity == 5


def test_one_seat_switches_as_before_and_keeps_no_seat(moto_table) -> None:
    prices = catalog()
    sub = team("one@example.com", prices["monthly"], seats=1)
    with at(MID):
        done = switch.switch(fresh(sub), prices["plus"], today=MID, actor="customer")
    assert done.quote.quantity == 1 and done.charged == period_amount(2000, 10, MID, date(2027, 4, 9)) - \
        period_amount(1000, 10, MID, date(2027, 4, 9))
    after = fresh(sub)
    assert (after.PaymentAmount, after.Quantity, after.UnitAmount) == (2000, None, None)


def test_the_portal_confirms_five_seats_and_charges_what_it_showed(db, moto_table) -> None:
    prices = catalog()
    customer = make_customer("portal-seats@example.com")
    product = access.get_product("TEAM")
    with at(MADE):
        started = subscribing.subscribe_to_price(
            access.get_account(customer.account_id), product,
            choose_price(access.get_price(prices["monthly"]), product, SEATS), payment_day=10, card=card(),
            today=MADE, actor="customer")
    sub = fresh(started.sub)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with at(MID):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        choose = customer.client.get(url).content.decode()
        assert "Team Plus — $100.00 a month (upgrade: from today)" in choose  # the price for the five seats
        assert "Solo" not in choose
        page = customer.client.post(url, {"sku": prices["plus"]})
        html = page.content.decode()
        assert re.search(r'data-testid="switch-seats">\(\$20\.00 a seat × 5\)<', html)
        q = page.context["quote"]
        done = customer.client.post(url, {"sku": prices["plus"], "step": "confirm", "upgrade": "1",
                                          "charge": q.charge, "credit": q.credit}, follow=True)
    assert done.status_code == 200
    [charge] = switch_charges(sub)
    shown = re.search(r'data-testid="due-now">([^<]+)<', html).group(1)
    assert shown == format_with_symbol(charge["amount"], "USD") == "$25.80"
    assert fresh(sub).Quantity == 5


def test_the_staff_page_names_the_seats_kept(db, moto_table, client) -> None:
    from django.urls import reverse

    from tests.builders import make_user

    prices = catalog()
    sub = team("staff-seats@example.com", prices["monthly"])
    url = reverse("admin:staff_switch", args=[sub.account_id, sub.sub_id])
    with at(MID):
        client.force_login(make_user("money-seats@example.com", staff=True, money=True))
        assert "Team Plus — $100.00 a month (upgrade: from today)" in client.get(url).content.decode()
        shown = client.post(url, {"sku": prices["plus"]})
        question = shown.content.decode()
        assert "The seats are kept: 20.00 USD a seat × 5." in question and "25.80 USD is charged" in question
        done = client.post(url, dict(shown.context["form"].initial.items()), follow=True)
    assert "25.80 USD charged now" in done.content.decode()
    assert [c["amount"] for c in switch_charges(sub)] == [2580]


def test_seven_seats_to_a_price_by_tiers_of_seats_pay_the_tiers_amount_for_seven(moto_table) -> None:
    """The first 5 seats $12.00 each, the next $9.00 (graduated): seven seats at
    $10.00 each ($70.00) become $78.00 a month; the seats kept, no price a seat."""
    from billing.rules.pricing import BillingScheme, Tier, TiersMode

    prices = catalog()
    tiers = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                       tiers=(Tier(5, Decimal(1200)), Tier(None, Decimal(900))))
    graduated = price_actions.add_price("PLUS", tiers, actor="t", unit_label="seat", min_quantity=1,
                                        max_quantity=50).PriceId
    sub = team("tiers@example.com", prices["monthly"], seats=7)
    with at(MID):
        q = switch.quote(sub, graduated, today=MID)
        done = switch.switch(fresh(sub), graduated, today=MID, actor="customer", expected=q)
    end = date(2027, 4, 9)
    assert (q.new_price, q.unit_amount, q.quantity) == (7800, None, 7)
    assert done.charged == period_amount(7800, 10, MID, end) - period_amount(7000, 10, MID, end)
    after = fresh(sub)
    assert (after.PaymentAmount, after.Quantity, after.UnitAmount, after.PriceId) == (7800, 7, None, graduated)
