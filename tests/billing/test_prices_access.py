"""A product's prices in the table (billing/access/prices.py, docs/TABLE.md "Prices"):
made beside the product, read by id with one request, listed with the derived default
price, archived (never changed), each with its audit event; on moto and DynamoDB Local."""

from __future__ import annotations

from decimal import Decimal

import pytest

from billing import access
from billing.actions import prices as price_actions
from billing.models import CATALOG_EVENTS_ACCOUNT, Price
from billing.rules.price_objects import price_object, terms_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode, amount_for

API_TIERS = (Tier(1000, Decimal(0)), Tier(None, Decimal("0.2")))


@pytest.fixture
def product(table):
    return access.create_product("TEAM-PLAN", "Team plan", 1000, "USD")


def test_a_product_made_before_prices_lists_its_derived_default_price(product) -> None:
    [default] = access.list_prices("TEAM-PLAN")
    assert default.PriceId == "price_default_TEAM-PLAN"
    assert (default.UnitAmount, default.Currency, default.Interval, default.IntervalCount) == (1000, "USD", "month", 1)
    assert amount_for(terms_of(default), 1) == 1000
    # Never stored: the partition holds the product alone.
    assert [p.SK for p in Price.query(Price.pk(), Price.SK.startswith("PRICE#"))] == []
    assert access.get_price("price_default_TEAM-PLAN").UnitAmount == 1000
    # It follows the product's price (the subscribe path reads the product).
    access.update_product("TEAM-PLAN", name="Team plan", amount=1200, currency="USD")
    assert access.get_price("price_default_TEAM-PLAN").UnitAmount == 1200


def test_a_price_is_made_read_by_its_id_and_listed(product, ddb_requests) -> None:
    yearly = price_actions.add_price("TEAM-PLAN", PriceTerms("USD", unit_amount=Decimal(10000), interval="year"),
                                     actor="staff:ann", nickname="Yearly")
    assert yearly.PriceId.startswith("price_TEAM-PLAN_")
    assert f"PRICE#TEAM-PLAN#{yearly.PriceId}" == yearly.SK
    ddb_requests.reset()
    found = access.get_price(yearly.PriceId)
    assert ddb_requests.total == 1  # one GetItem: the id holds the SKU
    assert (found.UnitAmount, found.Interval, found.Nickname, found.Status) == (10000, "year", "Yearly", "active")
    ids = [p.PriceId for p in access.list_prices("TEAM-PLAN")]
    assert ids == ["price_default_TEAM-PLAN", yearly.PriceId]
    # The products' list reads only the products (their prices share the partition).
    assert [p.SKU for p in access.list_products()] == ["TEAM-PLAN"]


def test_a_tiered_metered_price_keeps_its_decimal_tiers_exactly(product) -> None:
    terms = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=API_TIERS)
    price = access.create_price("TEAM-PLAN", terms, actor="test", meter="api_calls", unit_label="call")
    read = access.get_price(price.PriceId)
    assert terms_of(read) == terms
    assert amount_for(terms_of(read), 3500) == 500
    shown = price_object(read)
    assert shown["tiers"] == [{"up_to": 1000, "unit_amount": 0, "unit_amount_decimal": "0", "flat_amount": 0},
                              {"up_to": None, "unit_amount": None, "unit_amount_decimal": "0.2", "flat_amount": 0}]
    assert shown["meter"] == "api_calls" and shown["recurring"]["usage_type"] == "metered"
    assert shown["unit_amount"] is None and shown["billing_scheme"] == "tiered"


def test_a_fractional_unit_amount_is_stored_as_its_decimal(product) -> None:
    price = access.create_price("TEAM-PLAN", PriceTerms("USD", unit_amount=Decimal("0.25")), actor="test")
    read = access.get_price(price.PriceId)
    assert (read.UnitAmount, read.UnitAmountDecimal) == (None, "0.25")
    assert price_object(read)["unit_amount_decimal"] == "0.25"


def test_archiving_hides_a_price_from_the_list_and_changes_nothing_else(product) -> None:
    price = access.create_price("TEAM-PLAN", PriceTerms("USD", unit_amount=Decimal(900)), actor="test")
    price_actions.archive_price(access.get_price(price.PriceId), actor="staff:ann")
    assert [p.PriceId for p in access.list_prices("TEAM-PLAN")] == ["price_default_TEAM-PLAN"]
    archived = access.get_price(price.PriceId)
    assert (archived.Status, archived.UnitAmount) == ("archived", 900)
    assert [p.PriceId for p in access.list_prices("TEAM-PLAN", include_archived=True)][1] == price.PriceId
    with pytest.raises(access.ConditionFailed):
        access.archive_price(archived, actor="test")
    with pytest.raises(access.DefaultPriceFixed):
        access.archive_price(access.get_price("price_default_TEAM-PLAN"), actor="test")


def test_each_change_has_its_audit_event(product) -> None:
    price = access.create_price("TEAM-PLAN", PriceTerms("USD", unit_amount=Decimal(900)), actor="staff:ann")
    access.archive_price(price, actor="staff:bob")
    events = [e for e in access.get_events_by_account(CATALOG_EVENTS_ACCOUNT) if e.Subject == price.SK]
    assert sorted((e.Action, e.Actor) for e in events) == [("price.archived", "staff:bob"),
                                                           ("price.created", "staff:ann")]


def test_no_price_for_a_product_the_catalog_lacks(table) -> None:
    with pytest.raises(access.NoSuchProduct):
        access.create_price("NOPE", PriceTerms("USD", unit_amount=Decimal(1)), actor="test")
    assert access.list_prices("NOPE") == []


@pytest.mark.parametrize("price_id", ["price_default_NOPE", "price_NOPE_abc", "nope", "price_", "price_x#y_z",
                                      "price_default_", "x" * 3000])
def test_an_id_that_names_no_price_finds_none(table, price_id) -> None:
    assert access.get_price(price_id) is None


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"trial_days": 400}, "trial days"), ({"min_quantity": 5, "max_quantity": 2}, "below the minimum"),
    ({"max_quantity": 0}, "maximum quantity"),
])
def test_bad_quantities_or_trials_are_refused(product, kwargs, words) -> None:
    with pytest.raises(ValueError, match=words):
        access.create_price("TEAM-PLAN", PriceTerms("USD", unit_amount=Decimal(1)), actor="test", **kwargs)
