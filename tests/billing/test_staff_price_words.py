"""The staff's account page names each subscription's prices in words: the fixed
price's with its seats, an amount and cadence for a subscription made before prices,
and the metered price's."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from billing import access
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation, Subscription
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from core.pages import today
from tests.builders import TEST_CARD, fresh, make_customer, make_user


@pytest.mark.django_db
def test_the_account_page_shows_each_subscription_s_price_in_words(client, moto_table) -> None:
    customer = make_customer("prices@example.com")
    account = access.get_account(customer.account_id)
    access.create_product("TEAM", "Team plan", 1000, "USD")
    seat = price_actions.add_price("TEAM", PriceTerms("USD", unit_amount=Decimal(1000)), actor="test",
                                   unit_label="seat")
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    calls = price_actions.add_price("TEAM", PriceTerms("USD", billing_scheme=BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=(
        Tier(1000, unit_amount=Decimal(0)), Tier(None, unit_amount=Decimal("0.2")))), actor="test",
        unit_label="call", meter="api_calls")
    team = access.create_subscription(account, sku="TEAM", payment_day=15, amount=5000, currency="USD",
                                      card=TEST_CARD, today=today(), reminder_days_before=7, product_name="Team plan")
    team = access.update_subscription(team, [Subscription.PriceId.set(seat.PriceId), Subscription.Quantity.set(5)])
    attach_metered_price(fresh(team), calls.PriceId, actor="test")
    access.create_subscription(account, sku="YEN", payment_day=15, amount=120000, currency="JPY", card=TEST_CARD,
                               today=today(), reminder_days_before=7, product_name="Yearly", interval="year")
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    page = client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert 'data-testid="sub-price">$10.00 a seat a month × 5<' in page
    assert 'data-testid="sub-price">¥120,000 a year<' in page
    assert 'data-testid="sub-price">first 1,000 calls free, then $0.002 a call, a month<' in page
