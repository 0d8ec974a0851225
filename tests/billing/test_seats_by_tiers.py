"""A price by tiers of seats (billing/rules/seats.py, billing/rules/price_choice.py;
docs/PRICING.md "Seats priced by tiers"): a volume or graduated price, or a package price,
sold by the seat. Subscribing charges the price's ``amount_for`` the seats; a change of
seats settles the difference of the two whole prices over the days already paid (charged
when it is higher, credited when lower, which more seats can be under volume tiers); the
renewals charge the new whole price; the pages, the e-mail and the API say the tiers."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access
from billing.actions import prices as price_actions
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from billing.models import Price, Subscription
from billing.operations import payments
from billing.rules.api_objects import subscription_object
from billing.rules.price_choice import PriceRefused, choose_price, never_free
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode, amount_for
from billing.rules.schedule import period_amount
from billing.rules.seats import quote_seats
from core.money import format_with_code
from core.pages import today
from tests.builders import PASSWORD, card, fresh, make_user, receipts_of

pytestmark = pytest.mark.django_db

MADE = date(2027, 3, 10)  # payment day 10: paid through 9 April
MID = date(2027, 3, 25)
PAID_THROUGH = date(2027, 4, 9)

# $10.00 a seat up to 10 seats, $8.00 a seat for every seat from 11 (volume: the whole
# quantity at its tier's rate)
VOLUME = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                    tiers=(Tier(10, Decimal(1000)), Tier(None, Decimal(800))))
# the first 5 seats $12.00 each, the next ones $9.00 (graduated)
GRADUATED = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                       tiers=(Tier(5, Decimal(1200)), Tier(None, Decimal(900))))


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def _team_price(terms: PriceTerms, **bounds: int) -> tuple[Price, object]:
    product = access.get_product("TEAM") or access.create_product("TEAM", "Team", 1000, "USD")
    price = price_actions.add_price("TEAM", terms, actor="staff", nickname="By tiers", unit_label="seat",
                                    min_quantity=bounds.get("low", 1), max_quantity=bounds.get("high", 100))
    return price, product


def _subscribed(terms: PriceTerms, quantity: int, account=None) -> Subscription:
    price, product = _team_price(terms)
    with at(MADE):
        choice = choose_price(price, product, quantity)
        started = subscribing.subscribe_to_price(account or access.create_account("tiers@example.com"), product,
                                                 choice, payment_day=10, card=card(), today=MADE, actor="customer")
    assert started.started
    return fresh(started.sub)


def test_choosing_a_price_by_tiers_of_seats() -> None:
    assert amount_for(VOLUME, 10) == 10000 and amount_for(VOLUME, 11) == 8800
    assert amount_for(GRADUATED, 7) == 5 * 1200 + 2 * 900
    # a free first tier, or a volume tier that is free, would make some seats cost nothing
    assert never_free(VOLUME) and never_free(GRADUATED)
    assert not never_free(PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                     tiers=(Tier(3, Decimal(0)), Tier(None, Decimal(900)))))
    assert never_free(PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                 tiers=(Tier(3, Decimal(0), 500), Tier(None, Decimal(900)))))
    assert not never_free(PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                     tiers=(Tier(3, Decimal(700)), Tier(None, Decimal("0.4")))))


def test_subscribing_charges_the_tiers_amount_and_keeps_no_price_a_seat(moto_table) -> None:
    sub = _subscribed(VOLUME, 12)
    assert (sub.Quantity, sub.UnitAmount, sub.PaymentAmount) == (12, None, 9600)
    [first] = receipts_of(sub)
    assert first.ProcessedAmount == 9600
    assert subscription_object(sub, today())["unit_amount"] is None
    assert subscription_object(sub, today())["quantity"] == 12 and subscription_object(sub, today())["amount"] == 9600
    # refused: a price by tiers not sold by the seat, a free tier, and out of its bounds
    product = access.get_product("TEAM")
    plain = price_actions.add_price("TEAM", VOLUME, actor="staff", nickname="Not by the seat")
    with pytest.raises(PriceRefused, match="sold by the seat"):
        choose_price(plain, product, 1)
    free, _ = _team_price(PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                     tiers=(Tier(3, Decimal(0)), Tier(None, Decimal(900)))))
    with pytest.raises(PriceRefused, match="never free"):
        choose_price(free, product, 5)
    bounded, _ = _team_price(GRADUATED, low=2, high=20)
    with pytest.raises(PriceRefused, match="between 2 and 20") as refused:
        choose_price(bounded, product, 21)
    assert refused.value.field == "quantity"


def test_more_seats_at_a_lower_whole_price_are_credited_and_renewals_charge_the_tiers(moto_table) -> None:
    sub = _subscribed(VOLUME, 10)
    assert sub.PaymentAmount == 10000
    mail.outbox = []
    with at(MID):
        # 11 seats fall in the $8.00 tier: 88.00 a month instead of 100.00, so the days left are credited
        q = seats.quote(fresh(sub), 11, today=MID)
        assert (q.more, q.unit_amount, q.old_price, q.new_price, q.due_now) == (True, None, 10000, 8800, 0)
        assert q.credit_now == period_amount(1200, 10, MID, PAID_THROUGH)
        shown = seats.shown_now(fresh(sub), q)
        done = seats.change_quantity(fresh(sub), 11, "customer", today=MID, expected_version=fresh(sub).Version,
                                     expected_amount=shown)
    assert (done.charged, done.credited) == (0, shown) and shown == q.credit_now
    after = fresh(sub)
    assert (after.Quantity, after.UnitAmount, after.PaymentAmount) == (11, None, 8800)
    [told] = [m for m in mail.outbox if "seats" in m.subject.lower()]
    assert "$10.00 a seat up to 10 seats, $8.00 a seat above 10 seats" in told.body
    assert "Your next payment, on 10 April 2027, is $88.00." in told.body
    # fewer seats, back into the $10.00 tier: the whole price goes up, so they are charged
    with at(MID):
        back = seats.quote(fresh(sub), 9, today=MID)
        assert (back.more, back.new_price, back.credit_now) == (False, 9000, 0)
        assert back.due_now == period_amount(200, 10, MID, PAID_THROUGH)
        again = seats.change_quantity(fresh(sub), 9, "customer", today=MID)
    assert again.charged == seats.charged_now(fresh(sub), back) > 0
    # the renewal charges the tiers' amount of the seats held, as the estimate said
    with at(PAID_THROUGH.replace(day=10)):
        coming = payments.next_charge(fresh(sub))
        outcome = payments.take_payment(fresh(sub), run_date=date(2027, 4, 10))
    assert outcome.status == "paid" and coming.amount == outcome.amount == 9000


def test_the_seats_pages_say_the_tiers(customer) -> None:
    sub = _subscribed(GRADUATED, 7, access.get_account(customer.account_id))
    client = customer.client
    with at(MID):
        assert client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        summary = client.get(reverse("subscription", args=[sub.sub_id])).content.decode()
        page = client.get(reverse("change_seats", args=[sub.sub_id]))
        confirm = client.post(reverse("change_seats", args=[sub.sub_id]),
                              {"quantity": 8, "version": fresh(sub).Version})
    assert 'data-testid="seats">7 seats, priced by tiers</dd>' in summary
    html = page.content.decode()
    assert page.status_code == 200 and "priced by tiers" in html
    assert "first 5 seats at $12.00 a seat, then $9.00 a seat" in html
    shown = confirm.content.decode()
    q = seats.quote(fresh(sub), 8, today=MID)
    assert q.due_now == period_amount(900, 10, MID, PAID_THROUGH)
    assert f'name="amount" value="{seats.charged_now(fresh(sub), q)}"' in shown
    assert "Your next payment, on 10 April 2027, is $87.00: 8 seats, priced by tiers." in shown


@settings(max_examples=30, deadline=None)
@given(old=st.integers(1, 40), new=st.integers(1, 40), unit=st.integers(1, 5000))
def test_a_per_unit_price_as_terms_quotes_as_its_unit_amount(old: int, new: int, unit: int) -> None:
    """The tiers' path and the price a seat's agree where they must: a price of one
    amount a seat, given as terms, quotes what ``UnitAmount`` quotes; and adding seats then
    removing them the same day nets to nothing under any tiers."""
    common = {"Status": "active", "PaymentDay": 10, "PaidThroughDate": PAID_THROUGH.isoformat(),
              "NextPaymentDate": "2027-04-10", "CreatedDate": "2027-03-10T12:00:00+00:00", "Currency": "USD"}
    per_seat = Subscription(Quantity=old, UnitAmount=unit, PaymentAmount=unit * old, **common)
    tiered = Subscription(Quantity=old, PaymentAmount=unit * old, **common)
    terms = PriceTerms("USD", BillingScheme.PER_UNIT, unit_amount=Decimal(unit))
    a, b = quote_seats(per_seat, new, MID), quote_seats(tiered, new, MID, terms)
    assert (a.amount, a.due_now, a.credit_now, a.new_price) == (b.amount, b.due_now, b.credit_now, b.new_price)
    there = quote_seats(Subscription(Quantity=old, PaymentAmount=amount_for(VOLUME, old), **common), new, MID, VOLUME)
    back = quote_seats(Subscription(Quantity=new, PaymentAmount=amount_for(VOLUME, new), **common), old, MID, VOLUME)
    assert there.due_now == back.credit_now and there.credit_now == back.due_now


def test_staff_see_the_two_whole_prices_and_the_difference(customer, client) -> None:
    sub = _subscribed(VOLUME, 10, access.get_account(customer.account_id))
    url = reverse("admin:staff_seats", args=[customer.account_id, sub.sub_id])
    with at(MID):
        client.force_login(make_user("money@example.com", staff=True, money=True))
        first = client.get(url).content.decode()
        question = client.post(url, {"quantity": 11}).content.decode()
        q = seats.quote(fresh(sub), 11, today=MID)
        credit = seats.credited_now(fresh(sub), q)
        done = client.post(url, {"quantity": 11, "step": "confirm", "version": fresh(sub).Version, "amount": credit})
    assert "10 seats, priced by tiers: $10.00 a seat up to 10 seats" in first
    assert "From 10 to 11 seats, 100.00 USD to 88.00 USD a period by the price&#x27;s tiers?" in question
    assert f"{format_with_code(credit, 'USD')} is refunded to the customer" in question
    assert done.status_code == 302 and fresh(sub).PaymentAmount == 8800


def test_one_seat_switched_to_a_price_by_tiers_keeps_its_seat_priced_by_the_tiers(moto_table) -> None:
    """A subscription of one (no seats kept) switched to a price by volume tiers of seats
    holds one seat of it: a later change of seats follows the tiers, not its amount a seat."""
    from billing.actions import switch

    price, _ = _team_price(VOLUME)
    with at(MADE):
        started = subscribing.subscribe(access.create_account("solo@example.com"), sku="SOLO", product_name="Solo",
                                        payment_day=10, amount=900, currency="USD", card=card(), today=MADE,
                                        actor="customer")
    sub = fresh(started.sub)
    with at(MID):
        q = switch.quote(sub, price.PriceId, today=MID)
        switch.switch(fresh(sub), price.PriceId, today=MID, actor="customer", expected=q)
    after = fresh(sub)
    assert (after.PriceId, after.Quantity, after.UnitAmount, after.PaymentAmount) == (price.PriceId, 1, None, 1000)
    with at(MID):
        more = seats.quote(fresh(sub), 11, today=MID)
    assert (more.old_price, more.new_price) == (1000, 8800)  # 11 seats at the $8.00 tier
