"""The price models (billing/rules/pricing.py, docs/PRICING.md): their properties under
hypothesis, and the worked examples of Stripe's docs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules.pricing import (
    MAX_DECIMAL_PLACES,
    BillingScheme,
    PriceTerms,
    Tier,
    TiersMode,
    amount_for,
    graduated_parts,
    line,
    volume_tier,
)

quantities = st.integers(0, 10**7)
# Unit amounts in minor units, whole or with up to 12 decimal places (0.2 cents a call).
unit_amounts = st.one_of(st.integers(0, 10**6).map(Decimal),
                         st.decimals(min_value=0, max_value=10**4, places=3, allow_nan=False, allow_infinity=False),
                         st.decimals(min_value=0, max_value=1, places=MAX_DECIMAL_PLACES, allow_nan=False,
                                     allow_infinity=False))
flat_amounts = st.integers(0, 10**6)


@st.composite
def tier_lists(draw) -> tuple[Tier, ...]:
    bounds = sorted(draw(st.sets(st.integers(1, 10**6), max_size=4)))
    tiers = [Tier(up_to, draw(unit_amounts), draw(flat_amounts)) for up_to in bounds]
    return (*tiers, Tier(None, draw(unit_amounts), draw(flat_amounts)))


def tiered(mode: TiersMode, tiers: tuple[Tier, ...], currency: str = "USD") -> PriceTerms:
    return PriceTerms(currency, BillingScheme.TIERED, tiers_mode=mode, tiers=tiers)


def per_unit(unit_amount, currency: str = "USD", package_size: int | None = None) -> PriceTerms:
    return PriceTerms(currency, unit_amount=unit_amount, package_size=package_size)


# --- the properties -----------------------------------------------------------------------


@given(tier_lists(), quantities)
def test_graduated_is_the_sum_of_the_tiers_parts(tiers, quantity) -> None:
    parts = graduated_parts(tiers, quantity)
    assert amount_for(tiered(TiersMode.GRADUATED, tiers), quantity) == sum(amount for _, _, amount in parts)
    # The parts cover the quantity exactly, each tier at most its own width.
    assert sum(units for _, units, _ in parts) == quantity
    below = 0
    for tier, units, amount in parts:
        assert units > 0 and (tier.up_to is None or below + units <= tier.up_to)
        assert amount == line(tier.unit_amount, units) + tier.flat_amount
        below += units


@given(tier_lists(), quantities)
def test_volume_prices_every_unit_in_the_one_tier_the_total_falls_in(tiers, quantity) -> None:
    tier = volume_tier(tiers, quantity)
    position = tiers.index(tier)
    lower = tiers[position - 1].up_to if position else 0
    assert lower <= quantity or position == 0
    assert tier.up_to is None or quantity <= tier.up_to
    assert position == 0 or quantity > lower
    assert amount_for(tiered(TiersMode.VOLUME, tiers), quantity) == line(tier.unit_amount, quantity) + tier.flat_amount


@given(unit_amounts, st.integers(2, 10**4), quantities)
def test_package_rounds_up_to_whole_packages(unit_amount, size, quantity) -> None:
    whole = -(-quantity // size)
    assert whole * size >= quantity > (whole - 1) * size or quantity == 0
    assert amount_for(per_unit(unit_amount, package_size=size), quantity) == line(unit_amount, whole)


@given(unit_amounts)
def test_one_unit_of_a_per_unit_price_costs_its_unit_amount(unit_amount) -> None:
    assert amount_for(per_unit(unit_amount), 1) == line(unit_amount, 1)
    if unit_amount == unit_amount.to_integral_value():
        assert amount_for(per_unit(unit_amount), 1) == unit_amount


@given(st.integers(0, 10**6), quantities)
def test_a_whole_unit_amount_is_exact(unit_amount, quantity) -> None:
    assert amount_for(per_unit(unit_amount), quantity) == unit_amount * quantity


@given(st.one_of(tier_lists().map(lambda t: tiered(TiersMode.GRADUATED, t)),
                 unit_amounts.map(per_unit),
                 st.tuples(unit_amounts, st.integers(2, 1000)).map(lambda a: per_unit(a[0], package_size=a[1]))),
       quantities, st.integers(0, 10**5))
def test_more_units_never_cost_less(terms, quantity, more) -> None:
    # Not for volume: a quantity past a tier's end may cost less (Stripe's own example).
    assert amount_for(terms, quantity + more) >= amount_for(terms, quantity)


@given(tier_lists())
def test_zero_units_cost_the_flat_amounts_stripe_charges(tiers) -> None:
    # A graduated price enters no tier at 0; a volume price's 0 is in its first tier.
    assert amount_for(tiered(TiersMode.GRADUATED, tiers), 0) == 0
    assert amount_for(tiered(TiersMode.VOLUME, tiers), 0) == tiers[0].flat_amount


@given(unit_amounts)
def test_zero_units_of_a_per_unit_or_package_price_cost_nothing(unit_amount) -> None:
    assert amount_for(per_unit(unit_amount), 0) == 0
    assert amount_for(per_unit(unit_amount, package_size=5), 0) == 0


@given(st.integers(0, 10**9), st.integers(1, 10**6))
def test_a_line_rounds_half_up_once(tenths, quantity) -> None:
    unit = Decimal(tenths) / 10
    exact = unit * quantity
    rounded = line(unit, quantity)
    assert rounded - Decimal("0.5") <= exact < rounded + Decimal("0.5")


# --- Stripe's worked examples (docs.stripe.com, "Set up tiered pricing") -------------------

FONTS = (Tier(5, Decimal(700)), Tier(10, Decimal(650)), Tier(None, Decimal(600)))


@pytest.mark.parametrize(("quantity", "total"), [(1, 700), (5, 3500), (6, 3900), (20, 12000), (25, 15000)])
def test_stripe_volume_example(quantity, total) -> None:
    assert amount_for(tiered(TiersMode.VOLUME, FONTS), quantity) == total


@pytest.mark.parametrize(("quantity", "total"), [(1, 700), (5, 3500), (6, 4150), (20, 12750), (25, 15750)])
def test_stripe_graduated_example(quantity, total) -> None:
    # 6 fonts: 5 × $7 + 1 × $6.50 = $41.50; 20: $35 + $32.50 + 10 × $6 = $127.50.
    assert amount_for(tiered(TiersMode.GRADUATED, FONTS), quantity) == total


def test_stripe_package_example() -> None:
    # $5 per 5 units, rounded up: 8 units are two packages.
    assert amount_for(per_unit(500, package_size=5), 8) == 1000
    assert amount_for(per_unit(500, package_size=5), 5) == 500
    assert amount_for(per_unit(500, package_size=5), 11) == 1500


def test_first_thousand_calls_free_then_a_fifth_of_a_cent() -> None:
    api = tiered(TiersMode.GRADUATED, (Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"))))
    assert amount_for(api, 1000) == 0
    assert amount_for(api, 1002) == 0  # 0.4 cents rounds down
    assert amount_for(api, 1003) == 1  # 0.6 cents rounds up
    assert amount_for(api, 3500) == 500  # 2,500 calls × $0.002 = $5.00


def test_tiers_with_flat_amounts() -> None:
    # A flat $10 for the first 5, then $5 each: 7 units graduated = 1000 + 2 × 500.
    tiers = (Tier(5, Decimal(0), 1000), Tier(None, Decimal(500)))
    assert amount_for(tiered(TiersMode.GRADUATED, tiers), 7) == 2000
    assert amount_for(tiered(TiersMode.VOLUME, tiers), 3) == 1000
    assert amount_for(tiered(TiersMode.VOLUME, tiers), 7) == 3500


@pytest.mark.parametrize(("currency", "unit", "quantity", "total"),
                         [("JPY", 120000, 1, 120000), ("USD", 1000, 3, 3000), ("KWD", 2500, 2, 5000),
                          ("KWD", Decimal("0.5"), 3, 2), ("JPY", Decimal("0.4"), 1, 0)])
def test_zero_two_and_three_decimal_currencies(currency, unit, quantity, total) -> None:
    # Amounts are minor units whatever the currency's exponent: a yen, a cent, a fils.
    assert amount_for(per_unit(unit, currency), quantity) == total


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tiers", "words"), [
    ((), "at least one tier"),
    ((Tier(10, Decimal(1)),), "last tier must have no up_to"),
    ((Tier(None, Decimal(1)), Tier(None, Decimal(1))), "only the last tier"),
    ((Tier(10, Decimal(1)), Tier(10, Decimal(1)), Tier(None, Decimal(1))), "ascending: tier 2 (10) is not above 10"),
    ((Tier(10, Decimal(1)), Tier(5, Decimal(1)), Tier(None, Decimal(1))), "ascending"),
])
def test_bad_tiers_are_refused_with_the_reason(tiers, words) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        tiered(TiersMode.GRADUATED, tiers)


@pytest.mark.parametrize(("make", "words"), [
    (lambda: Tier(None, Decimal(-1)), "must not be negative"),
    (lambda: Tier(None, Decimal(1), -5), "flat_amount must be from 0"),
    (lambda: Tier(0, Decimal(1)), "up_to must be from 1"),
    (lambda: Tier(None, "0.0000000000001"), "more than 12 decimal places"),
    (lambda: Tier(None, 0.2), "decimal string"),
    (lambda: Tier(None, "NaN"), "number of minor units"),
    (lambda: per_unit(None), "needs a unit_amount"),
    (lambda: per_unit("ten"), "number of minor units"),
    (lambda: per_unit(100, package_size=1), "package size"),
    (lambda: PriceTerms("USD", BillingScheme.TIERED, tiers=FONTS), "needs tiers_mode"),
    (lambda: PriceTerms("USD", BillingScheme.TIERED, tiers_mode="stairs", tiers=FONTS), "tiers_mode must be one of"),
    (lambda: PriceTerms("USD", BillingScheme.TIERED, unit_amount=Decimal(1), tiers_mode="volume", tiers=FONTS),
     "not unit_amount"),
    (lambda: PriceTerms("USD", unit_amount=Decimal(1), interval="fortnight"), "interval must be one of"),
    (lambda: PriceTerms("USD", unit_amount=Decimal(1), interval="month", interval_count=37), "interval_count"),
    (lambda: PriceTerms("USD", unit_amount=Decimal(1), interval_count=0), "interval_count"),
    (lambda: PriceTerms("US", unit_amount=Decimal(1)), "three-letter"),
])
def test_bad_terms_are_refused_with_the_reason(make, words) -> None:
    with pytest.raises(ValueError, match=words):
        make()


def test_a_negative_quantity_is_refused() -> None:
    with pytest.raises(ValueError, match="quantity"):
        amount_for(per_unit(100), -1)


def test_the_models_names() -> None:
    assert per_unit(100).model == "per_unit"
    assert per_unit(100, package_size=5).model == "package"
    assert tiered(TiersMode.GRADUATED, FONTS).model == "graduated"
    assert tiered(TiersMode.VOLUME, FONTS).model == "volume"
