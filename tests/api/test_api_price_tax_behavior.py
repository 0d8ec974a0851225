"""A price's ``tax_behavior`` through the API (docs/TAX.md "A price's tax behaviour"): a
price takes and shows Stripe's words, an unknown word is a 400 naming the field, and a
subscription whose items would be taxed two ways is refused, naming the item."""

from __future__ import annotations

from decimal import Decimal

import pytest

from billing import access
from billing.actions import prices as price_actions
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from tests.api.conftest import ApiClient, error_of
from tests.builders import card, make_customer

pytestmark = pytest.mark.django_db

CALLS = PriceTerms("EUR", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=(Tier(None, Decimal(1)),))


def test_the_api_takes_and_shows_a_price_behaviour_and_refuses_a_mix(write_api: ApiClient) -> None:
    access.create_product("BOOKS", "Bookkeeping", 2000, "EUR")
    made = write_api.post("/prices", {"product": "BOOKS", "currency": "EUR", "unit_amount": 2000,
                                      "recurring": {"interval": "month"}, "tax_behavior": "exclusive"})
    assert made.status_code == 201, made.content
    assert made.json()["tax_behavior"] == "exclusive"
    wrong = write_api.post("/prices", {"product": "BOOKS", "currency": "EUR", "unit_amount": 2000,
                                       "recurring": {"interval": "month"}, "tax_behavior": "included"})
    assert wrong.status_code == 400 and error_of(wrong)["param"] == "tax_behavior"
    metered = price_actions.add_price("BOOKS", CALLS, actor="t", meter="calls")
    customer = make_customer("buyer@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    mixed = write_api.post("/subscriptions", {"customer": customer.account_id, "items": [
        {"price": made.json()["id"]}, {"price": metered.PriceId}]})
    assert mixed.status_code == 400 and error_of(mixed)["param"] == "items[1].price"
    assert "tax_behavior is unspecified, the fixed price's exclusive" in error_of(mixed)["message"]
    assert access.get_subscriptions_by_account(customer.account_id) == []
