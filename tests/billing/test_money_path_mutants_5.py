"""Behaviour of the money path that its mutants showed untested (docs/MUTATION.md), fifth
part: the price models (billing/rules/pricing.py) and the schedule (billing/rules/schedule.py)
measured again on 4 Dec 2026. The refusals' sentences, the edges of the bounds, and
arithmetic that must not depend on the caller's decimal context. All pure, each test well
under a second."""

from __future__ import annotations

import decimal
from datetime import date, timedelta
from decimal import Decimal

import pytest

from billing.rules.pricing import (
    MAX_QUANTITY,
    BillingScheme,
    Interval,
    PriceTerms,
    Tier,
    TiersMode,
    UsagePart,
    amount_for,
    amount_parts,
    seats_amount,
)
from billing.rules.schedule import Cadence, cadence_of, charges_paying_from, retry_after

# --- the price models --------------------------------------------------------------------


def test_a_quantity_out_of_bounds_is_refused_in_words() -> None:
    terms = PriceTerms("USD", unit_amount=1)
    with pytest.raises(ValueError, match="^quantity must be from 0 to 999999999999, not -1$"):
        amount_for(terms, -1)
    with pytest.raises(ValueError, match=f"^quantity must be from 0 to {MAX_QUANTITY}, not {MAX_QUANTITY + 1}$"):
        amount_for(terms, MAX_QUANTITY + 1)
    with pytest.raises(ValueError, match="^quantity must be a whole number, not 1.5$"):
        amount_for(terms, 1.5)
    assert amount_for(terms, MAX_QUANTITY) == MAX_QUANTITY  # the bound itself is a quantity


def test_each_line_of_an_amount_names_its_units_unit_amount_and_flat_amount() -> None:
    # a per-unit or package line has no flat amount (0, which the usage page leaves out)
    assert amount_parts(PriceTerms("USD", unit_amount="0.5"), 3) == [UsagePart(3, Decimal("0.5"), 0, 2, None)]
    assert amount_parts(PriceTerms("USD", unit_amount=500, package_size=100), 101) == [
        UsagePart(2, Decimal(500), 0, 1000, 100)]
    tiers = (Tier(10, Decimal("0.5"), 100), Tier(None, Decimal("0.25"), 7))
    volume = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME, tiers=tiers)
    assert amount_parts(volume, 12) == [UsagePart(12, Decimal("0.25"), 7, 10)]
    graduated = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=tiers)
    assert amount_parts(graduated, 12) == [UsagePart(10, Decimal("0.5"), 100, 105),
                                           UsagePart(2, Decimal("0.25"), 7, 8)]


def test_the_amounts_are_exact_whatever_the_caller_s_decimal_context() -> None:
    # A caller's narrow or banker's-rounding context must not change what a price costs.
    biggest = PriceTerms("USD", unit_amount=Decimal("999999999998.999999999999"))
    graduated = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                           tiers=(Tier(10, Decimal("0.5")), Tier(None, Decimal("0.25"))))
    expected = (amount_for(biggest, MAX_QUANTITY), amount_for(graduated, 12))
    assert expected == (999999999998000000000000, 6)  # 5 + 0.5 -> 1 (half up, not to even)
    with decimal.localcontext(prec=5, rounding=decimal.ROUND_HALF_EVEN, traps=[decimal.Inexact]):
        assert (amount_for(biggest, MAX_QUANTITY), amount_for(graduated, 12)) == expected


@pytest.mark.parametrize(("make", "words"), [
    (lambda: PriceTerms("US", unit_amount=1), "currency must be a three-letter code, not 'US'"),
    (lambda: PriceTerms("U1D", unit_amount=1), "currency must be a three-letter code, not 'U1D'"),
    (lambda: PriceTerms(840, unit_amount=1), "currency must be a three-letter code, not 840"),
    (lambda: PriceTerms("USD", unit_amount=1, interval="fortnight"),
     "interval must be one of day, week, month, year, not 'fortnight'"),
    (lambda: PriceTerms("USD", unit_amount=1, interval_count=37), "interval_count must be from 1 to 36, not 37"),
    (lambda: PriceTerms("USD", unit_amount=1, interval="year", interval_count=4),
     "interval_count must be from 1 to 3, not 4"),
    (lambda: PriceTerms("USD", unit_amount=1, interval="week", interval_count=0),
     "interval_count must be from 1 to 156, not 0"),
    (lambda: PriceTerms("USD"), "a per_unit price needs a unit_amount"),
    (lambda: PriceTerms("USD", unit_amount=1, tiers=(Tier(None),)), "tiers and tiers_mode belong to a tiered price only"),
    (lambda: PriceTerms("USD", unit_amount=1, tiers_mode="volume"), "tiers and tiers_mode belong to a tiered price only"),
    (lambda: PriceTerms("USD", unit_amount=1, package_size=1),
     "package size (transform_quantity.divide_by) must be from 2 to 999999999999, not 1"),
    (lambda: PriceTerms("USD", "tiered", unit_amount=1, tiers_mode="volume", tiers=(Tier(None),)),
     "a tiered price has its unit amounts in its tiers, not unit_amount"),
    (lambda: PriceTerms("USD", "tiered", tiers_mode="volume", tiers=(Tier(None),), package_size=2),
     "transform_quantity (a package) belongs to a per_unit price only"),
    (lambda: PriceTerms("USD", "tiered", tiers=(Tier(None),)), "a tiered price needs tiers_mode: graduated or volume"),
    (lambda: PriceTerms("USD", "tiered", tiers_mode="stairs", tiers=(Tier(None),)),
     "tiers_mode must be one of graduated, volume, not 'stairs'"),
    (lambda: PriceTerms("USD", "tiered", tiers_mode="volume"), "a tiered price needs at least one tier"),
    (lambda: PriceTerms("USD", "tiered", tiers_mode="volume", tiers=(Tier(5), Tier(5), Tier(None))),
     "tiers' up_to must be ascending: tier 2 (5) is not above 5"),
])
def test_price_terms_are_refused_with_the_whole_sentence(make, words) -> None:
    with pytest.raises(ValueError) as refused:
        make()
    assert str(refused.value) == words


def test_price_terms_keep_their_fields_normalised_at_the_bounds() -> None:
    terms = PriceTerms("eur", unit_amount="0.2", interval="year", interval_count=3, package_size=2)
    assert (terms.currency, terms.unit_amount, terms.interval, terms.interval_count, terms.package_size) == (
        "EUR", Decimal("0.2"), "year", 3, 2)
    assert type(terms.unit_amount) is Decimal and type(terms.interval) is Interval
    assert PriceTerms("USD", unit_amount=0, interval="day", interval_count=1095).interval_count == 1095
    assert PriceTerms("USD", unit_amount=0, package_size=MAX_QUANTITY).model == "package"
    tiered = PriceTerms("USD", "tiered", tiers_mode="graduated", tiers=[Tier(1), Tier(2), Tier(None, 1)])
    assert tiered.tiers == (Tier(1), Tier(2), Tier(None, 1)) and type(tiered.tiers) is tuple
    assert type(tiered.tiers_mode) is TiersMode and tiered.model == "graduated"
    assert type(tiered.billing_scheme) is BillingScheme and tiered.unit_amount is None


def test_a_period_s_price_of_seats_is_the_tiers_amount_else_one_seat_s_price_times_the_seats() -> None:
    tiers = (Tier(5, 1000), Tier(None, 800))  # the first 5 seats at 10.00, the others at 8.00
    graduated = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=tiers)
    assert seats_amount(7, terms=graduated) == 6600
    assert seats_amount(7, unit=999, terms=graduated) == 6600  # the tiers win over a unit price
    assert seats_amount(7, unit=1000) == 7000
    with pytest.raises(ValueError, match="^quantity must be from 0 to"):
        seats_amount(-1, terms=graduated)


# --- the schedule ------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "words"), [
    (lambda: Cadence(10, "week", 157, date(2027, 1, 4)), "every 157 weeks is out of range"),
    (lambda: Cadence(10, "week", 0, date(2027, 1, 4)), "every 0 weeks is out of range"),
    (lambda: Cadence(10, "year", 4, date(2027, 1, 10)), "every 4 years is out of range"),
    (lambda: Cadence(10, "day", 1096, date(2027, 1, 4)), "every 1096 days is out of range"),
    (lambda: Cadence(10, "week"), "every 1 weeks needs an anchor date"),
    (lambda: Cadence(10, "month", 2), "every 2 months needs an anchor date"),
    (lambda: Cadence(0), "payment day must be 1-31, not 0"),
    (lambda: Cadence(32, "week", 1, date(2027, 1, 4)), "payment day must be 1-31, not 32"),
])
def test_a_cadence_is_refused_in_words(make, words) -> None:
    with pytest.raises(ValueError) as refused:
        make()
    assert str(refused.value) == words


def test_a_cadence_s_bounds_are_included() -> None:
    anchor = date(2027, 1, 4)
    for interval, most in (("day", 1095), ("week", 156), ("month", 36), ("year", 3)):
        for count in (1, most):
            cadence = Cadence(31 if interval == "month" else 1, interval, count, anchor)
            assert cadence.count == count and type(cadence.interval) is Interval
    assert Cadence(1).interval == Interval.MONTH and Cadence(31).is_monthly


def test_an_item_s_cadence_is_read_from_its_interval_count_and_anchor() -> None:
    class Yearly:
        PaymentDay, Interval, IntervalCount, IntervalAnchor = 29, "year", 2, "2028-02-29"

    class Weekly:
        PaymentDay, Interval, IntervalCount, IntervalAnchor = 3, "week", None, "2027-01-04"

    assert cadence_of(Yearly()) == Cadence(29, Interval.YEAR, 2, date(2028, 2, 29))
    assert cadence_of(Weekly()) == Cadence(3, Interval.WEEK, 1, date(2027, 1, 4))


def test_the_receipts_read_back_reach_two_of_the_longest_periods_and_never_less_than_three_months() -> None:
    today = date(2027, 3, 15)
    assert charges_paying_from(Cadence(15, "year", 1, date(2026, 3, 15)), today) == date(2025, 2, 15)  # 25 months
    assert charges_paying_from(Cadence(15, "month", 2, date(2027, 1, 15)), today) == date(2026, 10, 15)  # 5 months
    assert charges_paying_from(15, today) == date(2026, 12, 15)  # 3 months
    # every 100 days: 201 days back; every 2 weeks: 29 days, so the three months
    assert charges_paying_from(Cadence(1, "day", 100, date(2027, 1, 1)), today) == today - timedelta(days=201)
    assert charges_paying_from(Cadence(1, "week", 2, date(2027, 1, 1)), today) == date(2026, 12, 15)


def test_a_retry_one_day_after_is_kept() -> None:
    declined = date(2027, 3, 15)
    assert retry_after(declined, [1, 3], 0) == date(2027, 3, 16)
    assert retry_after(declined, [1, 3], 1) == date(2027, 3, 17)  # the gap 3 - 1
    assert retry_after(declined, [1, 3], 2) is None
