"""Subscribing in the portal to a product's metered price alone (docs/USAGE.md "Usage
alone"): the subscribe page offers it as "Usage alone, no fixed fee"; the confirm page
says nothing is charged today and shows the price as the usage; the subscription pays
nothing at first (a receipt of 0, no charge) and names the metered price; a metered price
as a switch's target is its usage alone."""

from __future__ import annotations

import re

import pytest

from billing import access
from billing.actions import switch as switch_actions
from billing.rules.switch import usage_only
from core.payments.gateway import get_gateway
from tests.billing.test_portal_subscribe_metered import QUOTE, USAGE_WORDS, metered, travel  # noqa: F401 (its fixtures)
from tests.builders import GOOD_CARD, receipts_of

pytestmark = pytest.mark.django_db


def test_usage_alone_is_offered_confirmed_and_started_without_a_charge(travel, customer, metered) -> None:  # noqa: F811
    offers = customer.client.get("/subscribe/?product=API").content.decode()
    assert f'value="{metered.PriceId}"' in offers and f"Usage alone, no fixed fee: {USAGE_WORDS}" in offers
    step = customer.client.post("/subscribe/", {"product": "API", "price": metered.PriceId, "payment_day": "15",
                                                **GOOD_CARD})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert "Nothing is charged today: each payment is your usage of the period just ended." in html
    assert 'data-testid="amount">No fixed fee: you pay for your usage' in html
    assert f'data-testid="usage">{USAGE_WORDS}' in html and "Today you pay the fixed price only." not in html
    assert re.search(r'data-testid="first-charge">\$0\.00', html) and "Confirm and pay" not in html
    done = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert done.status_code == 302, done.content.decode()
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert usage_only(sub) and sub.MeteredPriceId == metered.PriceId and sub.PriceId is None
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [0]
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    page = customer.client.get(done["Location"]).content.decode()
    assert "Nothing was charged today: you pay for your usage, from your next payment on 15 March 2027." in page
    assert "No fixed fee: you pay for your usage" in page


def test_a_metered_price_as_a_switch_target_is_its_usage_alone(metered) -> None:  # noqa: F811
    _product, target = switch_actions.target_of(metered.PriceId)
    assert target is not None and target.metered and target.amount == 0 and target.stored_price_id is None


def test_a_coupon_with_usage_alone_is_refused_and_nothing_made(travel, customer, metered) -> None:  # noqa: F811
    access.create_coupon("TENOFF", actor="staff", percent_off=10, duration="forever")
    step = customer.client.post("/subscribe/", {"product": "API", "price": metered.PriceId, "payment_day": "15",
                                                "coupon": "TENOFF", **GOOD_CARD})
    # a field error on step 1, the choices kept
    assert step.status_code == 200
    assert step.context["form"].errors["coupon"] == [
        "The coupon TENOFF discounts a fixed fee: this subscription has none, only its usage."]
    assert access.get_subscriptions_by_account(customer.account_id) == []
    assert int(access.get_coupon("TENOFF").Uses or 0) == 0
