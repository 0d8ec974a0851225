"""A price's words (billing/rules/price_words.py): in English as the pages show them, and
in the other languages from the .po files."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import translation

from billing.rules.price_words import interval_words, price_words, tier_words
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from core.money import format_quantity, format_unit_price

API_CALLS = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                       tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"))))


@pytest.mark.parametrize(("interval", "count", "words"), [
    ("month", 1, "a month"), ("month", 3, "every 3 months"), ("year", 1, "a year"), ("week", 2, "every 2 weeks"),
    ("day", 1, "a day"), ("day", 30, "every 30 days"),
])
def test_interval_words(interval, count, words) -> None:
    assert interval_words(interval, count) == words


def test_the_prices_words_in_english() -> None:
    assert price_words(PriceTerms("USD", unit_amount=Decimal(1000)), "seat") == "$10.00 a seat a month"
    assert price_words(PriceTerms("JPY", unit_amount=Decimal(120000), interval="year")) == "¥120,000 a year"
    assert price_words(PriceTerms("EUR", unit_amount=Decimal(999), interval_count=3)) == "€9.99 every 3 months"
    assert price_words(PriceTerms("USD", unit_amount=Decimal(500), package_size=5)) == "$5.00 per 5 units a month"
    assert tier_words(API_CALLS, "call") == "first 1,000 calls free, then $0.002 a call"
    assert price_words(API_CALLS, "call") == "first 1,000 calls free, then $0.002 a call, a month"


def test_volume_and_flat_amounts_in_words() -> None:
    terms = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                       tiers=(Tier(5, Decimal(700), 100), Tier(None, Decimal(600))))
    assert tier_words(terms, "font") == ("$7.00 a font up to 5 fonts plus $1.00, $6.00 a font above 5 fonts "
                                         "(every font at the rate of the total)")


def test_three_decimal_currency_and_fractions_of_the_minor_unit() -> None:
    assert format_unit_price(Decimal(2500), "KWD") == "KWD 2.500"
    assert format_unit_price(Decimal("2.5"), "KWD") == "KWD 0.0025"
    assert format_unit_price(Decimal("0.2"), "USD") == "$0.002"
    assert format_quantity(1000000) == "1,000,000"


@pytest.mark.parametrize(("language", "label", "seat", "yen", "calls"), [
    # The label is the merchant's word, shown as given (an English one takes its "s").
    ("it", "call", "10,00 USD per posto al mese", "120.000 JPY all'anno",
     "i primi 1.000 calls gratis, poi 0,002 USD per call"),
    ("ko", "호출", "매월 좌석당 US$10.00", "매년 JP¥120,000", "처음 호출 1,000개 무료, 이후 호출당 US$0.002"),
    ("zh_Hans", "调用", "每月每座位 US$10.00", "每年 JP¥120,000", "前1,000调用免费, 之后每调用 US$0.002"),
])
def test_the_prices_words_in_other_languages(language, label, seat, yen, calls) -> None:
    seat_label = {"it": "posto", "ko": "좌석", "zh_Hans": "座位"}[language]
    with translation.override(language):
        assert price_words(PriceTerms("USD", unit_amount=Decimal(1000)), seat_label).replace("\xa0", " ") == seat
        assert price_words(PriceTerms("JPY", unit_amount=Decimal(120000), interval="year")).replace("\xa0", " ") == yen
        assert tier_words(API_CALLS, label).replace("\xa0", " ") == calls
        assert interval_words("month", 3) == {"it": "ogni 3 mesi", "ko": "3개월마다", "zh_Hans": "每3个月"}[language]


def test_english_says_an_before_a_vowel_but_u() -> None:
    agents = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                        tiers=(Tier(10, Decimal(1200)), Tier(None, Decimal(900))))
    assert price_words(agents, "agent").startswith("$12.00 an agent up to 10 agents, $9.00 an agent above")
    assert price_words(PriceTerms("USD", unit_amount=Decimal(500)), "editor") == "$5.00 an editor a month"
    assert price_words(PriceTerms("USD", unit_amount=Decimal(500)), "user") == "$5.00 a user a month"


@pytest.mark.parametrize(("meter", "label", "words"), [
    ("storage_gb", None, "$0.10 a unit a month"),  # usage by the unit: never a flat fee's words
    ("storage_gb", "GB", "$0.10 a GB a month"),
    (None, None, "$0.10 a month"),  # a fixed price: the period's amount
])
def test_a_metered_price_by_the_unit_names_its_unit(meter, label, words) -> None:
    from billing.models import Price
    from billing.rules.price_objects import price_words_of

    price = Price(Price.pk(), Price.sk(sku="API", price_id="price_x"), PriceId="price_x", SKU="API", Currency="USD",
                  UnitAmount=10, Interval="month", IntervalCount=1, BillingScheme="per_unit", Meter=meter,
                  UnitLabel=label, Status="active", CreatedDate="2027-01-01T00:00:00+00:00")
    assert price_words_of(price) == words
    if meter and not label:  # the unit's word is the active language's
        with translation.override("it"):
            assert "unità" in price_words_of(price)
