"""The VAT rules (billing/rules/tax.py) against hand-worked examples, and their
arithmetic for any price and rate."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules import tax
from billing.rules.invoice_tax import Share, refund_share
from billing.rules.tax import (
    EARLIER_STANDARD_RATES,
    RATES,
    RATES_AS_OF,
    Buyer,
    Rate,
    Seller,
    TaxCategory,
    TaxLine,
    Treatment,
    applicable_rate,
    quarter_of,
    standard_rate,
    tax_line,
)

ITALY = Seller(country="IT", vat_number="IT00743110157")
DAY = date(2026, 11, 26)


def test_an_italian_consumer_pays_22_percent_included() -> None:
    rate = applicable_rate(ITALY, Buyer("IT"), DAY)
    assert rate == Rate(Decimal(22), "IT", Treatment.DOMESTIC)
    # 12.20 gross: 2.20 of it is VAT (12.20 x 22 / 122 = 2.20)
    assert tax_line(1220, rate, prices_include_tax=True) == TaxLine(net=1000, tax=220, gross=1220, rate=rate)


def test_a_german_consumer_pays_19_percent_through_the_oss() -> None:
    rate = applicable_rate(ITALY, Buyer("DE"), DAY)
    assert (rate.percent, rate.country, rate.treatment) == (19, "DE", Treatment.OSS)
    line = tax_line(999, rate, prices_include_tax=True)
    # 999 x 19 / 119 = 159.50... -> 160 (half up)
    assert (line.net, line.tax, line.gross) == (839, 160, 999)


def test_under_the_threshold_the_seller_charges_its_own_rate() -> None:
    seller = Seller(country="IT", under_threshold=True)
    assert applicable_rate(seller, Buyer("FR"), DAY) == Rate(Decimal(22), "IT", Treatment.DOMESTIC)


def test_a_business_in_another_member_state_is_reverse_charged() -> None:
    rate = applicable_rate(ITALY, Buyer("DE", vat_number="DE136695976"), DAY)
    assert (rate.percent, rate.treatment) == (0, Treatment.REVERSE_CHARGE)
    assert "Article 196" in (rate.note or "")
    assert tax_line(1999, rate, prices_include_tax=True).tax == 0


def test_a_business_in_the_sellers_own_country_pays_the_sellers_rate() -> None:
    rate = applicable_rate(ITALY, Buyer("IT", vat_number="IT00743110157"), DAY)
    assert (rate.percent, rate.treatment) == (22, Treatment.DOMESTIC)


def test_finland_before_and_after_its_rate_change() -> None:
    assert applicable_rate(ITALY, Buyer("FI"), date(2024, 8, 31)).percent == 24
    assert applicable_rate(ITALY, Buyer("FI"), date(2024, 9, 1)).percent == Decimal("25.5")
    line = tax_line(1000, applicable_rate(ITALY, Buyer("FI"), date(2024, 9, 1)), prices_include_tax=False)
    assert (line.net, line.tax, line.gross) == (1000, 255, 1255)


def test_outside_the_eu_only_where_the_seller_is_registered() -> None:
    seller = Seller(country="IT", registrations={"GB": Decimal(20), "KR": Decimal(10)})
    assert applicable_rate(seller, Buyer("US"), DAY) == Rate(Decimal(0), "US", Treatment.NOT_SUBJECT)
    assert applicable_rate(seller, Buyer("KR"), DAY) == Rate(Decimal(10), "KR", Treatment.REGISTERED)
    assert applicable_rate(ITALY, Buyer("GB"), DAY).treatment == Treatment.NOT_SUBJECT


def test_a_seller_outside_the_eu_taxes_its_own_country_s_consumers_where_registered_there() -> None:
    seller = Seller(country="GB", registrations={"GB": Decimal(20)})
    assert applicable_rate(seller, Buyer("GB"), DAY) == Rate(Decimal(20), "GB", Treatment.DOMESTIC)
    # with no VAT number at home and no registration: not registered for VAT there
    assert applicable_rate(Seller(country="GB"), Buyer("GB"), DAY) == Rate(Decimal(0), "GB", Treatment.NOT_SUBJECT)


def test_a_uk_seller_with_its_vat_number_charges_uk_vat_to_uk_customers() -> None:
    uk = Seller(country="GB", vat_number="GB980780684")
    assert applicable_rate(uk, Buyer("GB"), DAY) == Rate(Decimal(20), "GB", Treatment.DOMESTIC)
    assert applicable_rate(uk, Buyer("GB", vat_number="GB980780684"), DAY).treatment == Treatment.DOMESTIC
    # its EU consumers through the (non-Union) OSS, its EU businesses reverse-charged, the rest not
    assert applicable_rate(uk, Buyer("DE"), DAY) == Rate(Decimal(19), "DE", Treatment.OSS)
    assert applicable_rate(uk, Buyer("DE", vat_number="DE136695976"), DAY).treatment == Treatment.REVERSE_CHARGE
    assert applicable_rate(uk, Buyer("US"), DAY).treatment == Treatment.NOT_SUBJECT


def test_the_reduced_category_through_the_oss_takes_the_buyer_s_country_s_lowest_reduced_rate() -> None:
    assert applicable_rate(ITALY, Buyer("DE"), DAY, TaxCategory.REDUCED) == Rate(Decimal(7), "DE", Treatment.OSS)
    # France's lowest reduced rates are Corsica's and its overseas departments': not the mainland's.
    assert applicable_rate(ITALY, Buyer("FR"), DAY, TaxCategory.REDUCED).percent == Decimal("5.5")


def test_the_regional_reduced_rates_set_aside_are_still_the_dataset_s() -> None:
    for country, rates in tax.REGIONAL_REDUCED_RATES.items():
        assert rates <= set(RATES[country]["reduced"]), country  # else the dataset changed: review the list


def test_a_100_percent_coupon_leaves_nothing_to_tax() -> None:
    line = tax_line(0, applicable_rate(ITALY, Buyer("IT"), DAY), prices_include_tax=True)
    assert (line.net, line.tax, line.gross) == (0, 0, 0)


def test_a_three_decimal_currency_rounds_to_its_own_minor_unit() -> None:
    # 12.345 KWD tax-exclusive at 22%: 2.7159 -> 2.716
    line = tax_line(12345, applicable_rate(ITALY, Buyer("IT"), DAY), prices_include_tax=False)
    assert (line.net, line.tax, line.gross) == (12345, 2716, 15061)


def test_the_reduced_category_takes_the_countrys_lowest_reduced_rate() -> None:
    assert applicable_rate(ITALY, Buyer("IT"), DAY, TaxCategory.REDUCED).percent == 5


def test_greece_is_found_under_its_vat_prefix_too() -> None:
    assert standard_rate("EL", DAY) == standard_rate("GR", DAY) == 24


@pytest.mark.parametrize(("country", "until", "earlier"), EARLIER_STANDARD_RATES)
def test_each_earlier_rate_was_replaced_by_the_datasets_current_one(country: str, until: date,
                                                                    earlier: Decimal) -> None:
    assert until <= RATES_AS_OF
    assert Decimal(str(RATES[country]["standard"])) != earlier


def test_a_country_whose_rate_changed_more_than_once_has_each_rate_in_its_own_days(monkeypatch) -> None:
    # Romania's history (24 % to 2015, 20 % in 2016, 19 % to July 2025), listed out of
    # order and with rates that fell: each day takes the change it precedes first
    monkeypatch.setattr(tax, "EARLIER_STANDARD_RATES", (
        ("RO", date(2025, 8, 1), Decimal(19)), ("RO", date(2016, 1, 1), Decimal(24)),
        ("RO", date(2017, 1, 1), Decimal(20))))
    days = [date(2015, 12, 31), date(2016, 1, 1), date(2016, 12, 31), date(2017, 1, 1), date(2025, 7, 31),
            date(2025, 8, 1)]
    current = Decimal(str(RATES["RO"]["standard"]))
    assert [standard_rate("RO", day) for day in days] == [24, 20, 20, 19, 19, current]


def test_a_refunds_share_of_the_tax_is_rounded_half_up() -> None:
    # half a minor unit goes to the first refund (half to even would leave it to the next)
    assert refund_share(tax=1, gross=2, earlier=[], refund=1) == Share(net=0, tax=1, gross=1)
    assert refund_share(tax=1, gross=2, earlier=[1], refund=1) == Share(net=1, tax=0, gross=1)
    assert refund_share(tax=5, gross=10, earlier=[], refund=5) == Share(net=2, tax=3, gross=5)  # 2.5: 3, not 2
    assert refund_share(tax=5, gross=10, earlier=[5], refund=5) == Share(net=3, tax=2, gross=5)


@pytest.mark.parametrize(("earlier", "refund"), [
    ([], 0),  # nothing refunded
    ([], -1),
    ([-1], 1),  # an earlier "refund" that took money
    ([60], 50),  # more than the 40 left
    ([], 101),  # more than the invoice
])
def test_a_refund_of_nothing_or_of_more_than_is_left_has_no_share(earlier: list[int], refund: int) -> None:
    with pytest.raises(ValueError, match="^a refund is positive and at most what is left of the invoice$"):
        refund_share(tax=21, gross=100, earlier=earlier, refund=refund)


def test_the_refund_of_exactly_what_is_left_takes_the_rest_of_the_tax() -> None:
    assert refund_share(tax=21, gross=100, earlier=[60], refund=40) == Share(net=32, tax=8, gross=40)


def test_quarters() -> None:
    assert [quarter_of(date(2026, m, 1)) for m in (1, 3, 4, 9, 10, 12)] == \
        ["2026Q1", "2026Q1", "2026Q2", "2026Q3", "2026Q4", "2026Q4"]


percents = st.sampled_from(sorted({Decimal(str(r["standard"])) for r in RATES.values() if r["standard"]}
                                  | {Decimal(0)}))


@given(price=st.integers(0, 10**9), percent=percents, inclusive=st.booleans())
def test_gross_is_net_plus_tax_and_the_tax_is_the_rounded_share(price: int, percent: Decimal, inclusive: bool) -> None:
    line = tax_line(price, Rate(percent, "XX", Treatment.OSS), prices_include_tax=inclusive)
    assert line.gross == line.net + line.tax
    assert line.tax >= 0 and line.net >= 0
    exact = Decimal(line.gross) * percent / (100 + percent) if inclusive else Decimal(line.net) * percent / 100
    assert abs(Decimal(line.tax) - exact) <= Decimal("0.5")
    assert (line.gross if inclusive else line.net) == price


def test_a_charge_s_tax_line_is_what_its_metadata_carried_when_it_adds_up_else_included_at_its_rate() -> None:
    """Recording a charge (the run's, the reconciliation's): the net and tax the charge
    carried when they add up to what was charged; else (figures missing, or a charge of
    another amount) the tax included in the amount at the rate it names."""
    from billing.rules.invoice_tax import line_of_metadata

    metadata = {"tax_rate": "22", "tax_country": "IT", "tax_treatment": "domestic", "net": "1001", "tax": "219"}
    line = line_of_metadata(metadata, 1220)
    assert (line.net, line.tax, line.gross, line.rate.percent, line.rate.country) == (1001, 219, 1220, 22, "IT")
    rate_only = {k: v for k, v in metadata.items() if k.startswith("tax_")}
    for carried in ({"net": "1001", "tax": "300"}, {"net": "1001"}, {"tax": "219"}, {"net": "x", "tax": "219"}):
        line = line_of_metadata({**rate_only, **carried}, 1220)
        assert (line.net, line.tax, line.gross) == (1000, 220, 1220), carried  # 22 % included in 12.20
    assert line_of_metadata({"net": "1000", "tax": "220"}, 1220) is None  # no rate: a charge before taxes


@pytest.mark.parametrize(("number", "country"), [
    ("GB980780684", "GB"), ("GB 980 7806 84", "GB"), ("980780684", "GB"),  # the UK's, with or without its prefix
    ("CHE-116.281.710 MWST", "CH"), ("NO 995 525 828 MVA", "NO"),
    ("IE6388047V", "IE"), ("DE136695976", "DE"), ("EL094259216", "GR"),
])
def test_every_number_python_stdnum_validates_for_its_country_is_accepted(number: str, country: str) -> None:
    from billing.rules.vat_numbers import vat_number_problem

    assert vat_number_problem(number, country) is None


def test_a_number_of_another_country_or_with_a_wrong_check_digit_is_refused() -> None:
    from billing.rules.vat_numbers import VatProblem, vat_number_problem

    assert vat_number_problem("GB980780684", "DE") == VatProblem.COUNTRY
    assert vat_number_problem("DE136695976", "GB") == VatProblem.COUNTRY
    assert vat_number_problem("GB980780685", "GB") == VatProblem.INVALID
    assert vat_number_problem("GB 123 4567 89", "GB") == VatProblem.INVALID  # the old default: no valid check digit
    assert vat_number_problem("136695976", "DE") == VatProblem.INVALID  # an EU number without its prefix


def test_the_default_seller_is_an_eu_seller_with_the_oss_whose_own_number_its_page_accepts(settings) -> None:
    from billing.access.seller import default_seller_profile, seller_of
    from billing.rules.vat_numbers import vat_number_problem

    profile = default_seller_profile()
    assert tax.is_eu(profile.Country) and profile.OssRegistered
    assert vat_number_problem(profile.VatNumber, profile.Country) is None
    seller = seller_of(profile)
    assert applicable_rate(seller, Buyer(profile.Country), DAY).treatment == Treatment.DOMESTIC
    assert applicable_rate(seller, Buyer("DE"), DAY) == Rate(Decimal(19), "DE", Treatment.OSS)
