"""Subscribing to a chosen price of a product (billing/rules/price_choice.py and the
action's ``subscribe_to_price``), and the demo part that does it, on moto."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth import get_user_model
from hypothesis import given
from hypothesis import strategies as st

from billing import access
from billing.actions import prices as price_actions
from billing.management.demo import prices as demo_prices
from billing.management.demo import subscribed_prices
from billing.models import Price, Product
from billing.operations.outcomes import PaymentStatus
from billing.operations.payments import take_payment
from billing.rules.price_choice import PriceRefused, choose_price
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from tests.builders import receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)


def _price(sku: str, nickname: str):
    return next(p for p in access.list_prices(sku) if p.Nickname == nickname)


def test_a_price_says_what_a_subscription_to_it_pays(moto_table) -> None:
    demo_prices.seed(TODAY)
    photo, team = access.get_product("PHOTO-PRO"), access.get_product("TEAM-SEATS")
    yearly = choose_price(_price("PHOTO-PRO", "Yearly"), photo)
    assert (yearly.amount, yearly.interval, yearly.interval_count, yearly.currency, yearly.attributes()) == (
        12000, "year", 1, "USD", {})
    seats = choose_price(_price("TEAM-SEATS", "Per seat"), team, 5)
    assert (seats.amount, seats.attributes()) == (5000, {"quantity": 5, "unit_amount": 1000})
    default = choose_price(access.list_prices("PHOTO-PRO")[0], photo)
    assert (default.amount, default.interval, default.stored_price_id) == (1200, "month", None)


def test_refusals_name_their_field(moto_table) -> None:
    demo_prices.seed(TODAY)
    photo, team, api = (access.get_product(s) for s in ("PHOTO-PRO", "TEAM-SEATS", "API-ACCESS"))
    with pytest.raises(PriceRefused, match="metered") as refused:
        choose_price(_price("API-ACCESS", "API calls"), api)
    assert refused.value.field == "price"
    with pytest.raises(PriceRefused, match="not one of this product") as refused:
        choose_price(_price("PHOTO-PRO", "Yearly"), team)
    with pytest.raises(PriceRefused, match="between 1 and 50") as refused:
        choose_price(_price("TEAM-SEATS", "Per seat"), team, 51)
    assert refused.value.field == "quantity"
    with pytest.raises(PriceRefused) as refused:
        choose_price(_price("PHOTO-PRO", "Yearly"), photo, 2)
    assert refused.value.field == "quantity"
    volume = price_actions.add_price("PHOTO-PRO", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                                            tiers=(Tier(None, Decimal(100)),)), actor="t")
    # a tiered price is subscribed to by the seat only (its amount is the seats')
    with pytest.raises(PriceRefused, match="sold by the seat"):
        choose_price(volume, photo)
    archived = price_actions.archive_price(_price("PHOTO-PRO", "Yearly"), actor="t")
    with pytest.raises(PriceRefused, match="archived"):
        choose_price(archived, photo)


def test_the_price_trial_else_the_products(moto_table) -> None:
    access.create_product("TRIAL-P", "Trial product", 500, "USD", trial_days=14)
    product = access.get_product("TRIAL-P")
    assert choose_price(access.list_prices("TRIAL-P")[0], product).trial_days == 14
    own = price_actions.add_price("TRIAL-P", PriceTerms("USD", unit_amount=Decimal(5000), interval="year"), actor="t",
                                  trial_days=30)
    assert choose_price(own, product).trial_days == 30


def test_the_demo_subscribes_team_to_the_yearly_and_five_seats_once(moto_table) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        demo_prices.seed(TODAY)
        lines = subscribed_prices.seed(TODAY)
        assert sum(line.endswith(": started") for line in lines) == 3 and not any("did not" in line for line in lines), lines
        user = get_user_model().objects.get(username=subscribed_prices.EMAIL)
        account_id = access.get_account_id_for_user(user.pk)
        subs = {s.SKU: s for s in access.get_subscriptions_by_account(account_id)}
        yearly, seats = subs["PHOTO-PRO"], subs["TEAM-SEATS"]
        assert (yearly.PriceId, yearly.PaymentAmount, yearly.Interval) == (_price("PHOTO-PRO", "Yearly").PriceId,
                                                                           12000, "year")
        assert yearly.NextPaymentDate == "2028-03-10"
        assert (seats.PriceId, seats.Quantity, seats.UnitAmount, seats.PaymentAmount) == (
            _price("TEAM-SEATS", "Per seat").PriceId, 5, 1000, 5000)
        # three seats subscribed, two added the same day: their whole first period charged
        assert sorted(r.ProcessedAmount for r in receipts_of(seats)) == [2000, 3000]
        # 12 agents by volume tiers: all at the second tier's $9.00, no price an agent kept
        desk = subs["SUPPORT-DESK"]
        assert (desk.Quantity, desk.UnitAmount, desk.PaymentAmount) == (12, None, 10800)
        assert [r.ProcessedAmount for r in receipts_of(desk)] == [10800]
        again = subscribed_prices.seed(TODAY)
        assert all("already" in line for line in again), again
        assert len(access.get_subscriptions_by_account(account_id)) == 3


@given(unit=st.integers(1, 10**7), low=st.integers(0, 60), span=st.integers(0, 60),
       quantity=st.one_of(st.none(), st.integers(-5, 200)), label=st.sampled_from([None, "seat"]))
def test_a_seat_price_charges_unit_times_seats_within_its_bounds_or_refuses_the_quantity(
        unit: int, low: int, span: int, quantity: int | None, label: str | None) -> None:
    product = Product(Product.pk(), Product.sk(sku="P"), SKU="P", Name="P", PaymentAmount=100, Currency="USD")
    price = Price(Price.pk(), Price.sk(sku="P", price_id="price_P_x"), PriceId="price_P_x", SKU="P", Currency="usd",
                  UnitAmount=unit, Interval="month", IntervalCount=1, BillingScheme="per_unit", UnitLabel=label,
                  MinQuantity=low, MaxQuantity=low + span, Status="active", CreatedDate="2027-01-01")
    try:
        choice = choose_price(price, product, quantity)
    except PriceRefused as refused:
        assert refused.field == "quantity"
        assert quantity is None and low + span < 1 or quantity is not None and not max(low, 1) <= quantity <= low + span
        return
    assert max(low, 1) <= choice.quantity <= low + span
    assert choice.amount == unit * choice.quantity and choice.currency == "USD"
    assert choice.attributes() == {"quantity": choice.quantity, "unit_amount": unit}


def test_an_archived_price_keeps_its_subscribers(moto_table) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        demo_prices.seed(TODAY)
        subscribed_prices.seed(TODAY)
        yearly = _price("PHOTO-PRO", "Yearly")
        price_actions.archive_price(yearly, actor="t")
    user = get_user_model().objects.get(username=subscribed_prices.EMAIL)
    [sub] = [s for s in access.get_subscriptions_by_account(access.get_account_id_for_user(user.pk))
             if s.SKU == "PHOTO-PRO"]
    renewal = date(2028, 3, 10)
    with time_machine.travel(f"{renewal.isoformat()} 12:00Z", tick=False):
        outcome = take_payment(sub, run_date=renewal)
    assert (outcome.status, outcome.amount) == (PaymentStatus.PAID, 12000)
    after = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku)
    assert (after.PriceId, after.NextPaymentDate, after.is_live) == (yearly.PriceId, "2029-03-10", True)
