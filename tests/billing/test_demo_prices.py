"""The demo's prices part (billing/management/demo/prices.py): seeded on moto, twice."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.management.commands.seed_demo import PRODUCTS as SEED_PRODUCTS
from billing.management.demo import prices as demo_prices


def test_the_demo_prices_seed_twice_without_a_second_copy(moto_table) -> None:
    lines = demo_prices.seed(date(2026, 12, 4))
    assert any("$10.00 a seat a month" in line for line in lines)
    assert any("first 1,000 calls free, then $0.002 a call, a month" in line for line in lines)
    assert any("¥120,000 a year" in line for line in lines)
    assert any("$120.00 a year" in line for line in lines)
    first = {sku: [p.PriceId for p in access.list_prices(sku)] for sku, *_ in demo_prices.PRODUCTS}
    assert demo_prices.seed(date(2026, 12, 4)) == lines
    assert {sku: [p.PriceId for p in access.list_prices(sku)] for sku, *_ in demo_prices.PRODUCTS} == first
    # A monthly (the product's default) and a yearly price; the per-seat price's bounds.
    assert [p.Interval for p in access.list_prices("PHOTO-PRO")] == ["month", "year"]
    seat = access.list_prices("TEAM-SEATS")[1]
    assert (seat.MinQuantity, seat.MaxQuantity, seat.UnitLabel) == (1, 50, "seat")
    assert access.list_prices("API-ACCESS")[1].Meter == "api_calls"


def test_the_demo_prices_skus_are_not_seed_demos() -> None:
    assert not {sku for sku, *_ in demo_prices.PRODUCTS} & {sku for sku, *_ in SEED_PRODUCTS}
