"""How a usage amount adds up (``pricing.amount_parts``, shown on the customer's usage
page): a line a tier entered, the one volume tier, the units or the packages; the lines sum
to ``amount_for`` exactly, whatever the model, the tiers and the quantity; and their words."""

from __future__ import annotations

from decimal import Decimal

from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from billing.rules.price_words import part_words
from billing.rules.pricing import PriceTerms, Tier, TiersMode, amount_for, amount_parts
from tests.billing.test_pricing_models import per_unit, quantities, tier_lists, tiered, unit_amounts

models = st.one_of(
    tier_lists().map(lambda tiers: tiered(TiersMode.GRADUATED, tiers)),
    tier_lists().map(lambda tiers: tiered(TiersMode.VOLUME, tiers)),
    unit_amounts.map(per_unit),
    st.tuples(unit_amounts, st.integers(2, 10**4)).map(lambda a: per_unit(a[0], package_size=a[1])),
)


@given(models, quantities)
def test_the_lines_sum_to_the_amount_charged(terms: PriceTerms, quantity: int) -> None:
    parts = amount_parts(terms, quantity)
    assert sum(p.amount for p in parts) == amount_for(terms, quantity)
    if terms.package_size is None:
        assert sum(p.units for p in parts) == quantity  # every unit on a line, once


def test_the_words_of_each_line() -> None:
    graduated = tiered(TiersMode.GRADUATED, (Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"), 500)))
    package = per_unit(Decimal(500), package_size=100)
    with translation.override("en"):
        assert [(part_words(p, "USD", "call"), p.amount) for p in amount_parts(graduated, 1235)] == [
            ("1,000 calls free", 0), ("235 calls × $0.002 plus $5.00", 547)]
        assert [part_words(p, "USD", "call") for p in amount_parts(package, 250)] == [
            "3 packages of 100 calls × $5.00"]
        assert part_words(amount_parts(per_unit(Decimal(999)), 1)[0], "USD", "seat") == "1 seat × $9.99"
        assert part_words(amount_parts(per_unit(Decimal(100)), 5)[0], "JPY") == "5 units × ¥100"
