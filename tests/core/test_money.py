"""Money in minor units: the ISO-4217 exponents, amounts without a value or a currency, the
error text, and the two formats in each language (core/money.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from core import money

pytestmark = pytest.mark.django_db(databases=[])



@pytest.mark.parametrize(("amount", "currency", "minor"), [
    ("1234", "JPY", 1234), ("1.234", "KWD", 1234), ("12.34", "usd", 1234), ("7", "jpy", 7),
])
def test_minor_units_follow_the_currency_exponent(amount, currency, minor):
    assert money.minor_units(Decimal(amount), currency) == minor


def test_minor_units_refuse_more_decimals_than_the_currency_has_and_say_how_many():
    with pytest.raises(ValueError, match=r"^JPY has 0 decimal places at most\.$"):
        money.minor_units(Decimal("12.5"), "jpy")
    with pytest.raises(ValueError, match=r"^KWD has 3 decimal places at most\.$"):
        money.minor_units(Decimal("1.2345"), "kwd")


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (1234, "KWD", "1.234"), (1234, "JPY", "1234"), (-5, "usd", "-0.05"), (0, "EUR", "0.00"),
])
def test_decimal_string_uses_the_exponent(amount, currency, text):
    assert money.decimal_string(amount, currency) == text
    assert money.to_decimal(amount, currency) == Decimal(text)


@pytest.mark.parametrize("empty", [None, ""])
def test_no_amount_formats_as_nothing(empty):
    assert money.format_with_code(empty, "USD") == ""
    assert money.format_with_symbol(empty, "USD") == ""


@pytest.mark.parametrize(("amount", "currency", "with_code", "with_symbol"), [
    (123456, "usd", "1,234.56 USD", "$1,234.56"),
    (-999, "EUR", "-9.99 EUR", "-€9.99"),
    (1234567, "JPY", "1,234,567 JPY", "¥1,234,567"),
    (1234, "kwd", "1.234 KWD", "KWD 1.234"),
    (-123456, "CHF", "-1,234.56 CHF", "-CHF 1,234.56"),
    (5, None, "0.05 ", " 0.05"),
])
def test_formatting_with_code_and_with_symbol(amount, currency, with_code, with_symbol):
    assert money.format_with_code(amount, currency) == with_code
    assert money.format_with_symbol(amount, currency) == with_symbol


def test_unknown_or_missing_currency_has_two_decimals():
    assert money.exponent("xyz") == 2
    assert money.exponent("") == 2
    assert money.exponent(None) == 2  # type: ignore[arg-type]
    assert money.exponent("bhd") == 3


@pytest.mark.parametrize(("language", "amount", "currency", "text"), [
    ("it", 999, "EUR", "9,99\xa0€"), ("ko", 9900, "KRW", "₩9,900"), ("it", 1234, "KWD", "1,234\xa0KWD"),
    ("zh-hans", 123456, "JPY", "JP¥123,456"),
])
def test_a_price_for_customers_follows_the_active_language(language, amount, currency, text) -> None:
    from django.utils import translation

    with translation.override(language):
        assert money.format_with_symbol(amount, currency) == text


@pytest.mark.parametrize(("language", "amount", "currency", "text"), [
    ("it", 999, "eur", "9,99 EUR"), ("ko", 9900, "krw", "9,900 KRW"), ("it", 1234, "kwd", "1,234 KWD"),
    ("zh-hans", -1050, "usd", "-10.50 USD"),
])
def test_an_amount_with_its_code_follows_the_active_language(language, amount, currency, text) -> None:
    from django.utils import translation

    with translation.override(language):
        assert money.format_with_code(amount, currency) == text


def test_an_amount_without_a_currency_shows_the_number_alone(settings) -> None:
    from django.utils import translation

    with translation.override("it"):
        assert money.format_with_code(999, "").strip() == "9,99"


@pytest.mark.parametrize("language", ["it", "ko", "zh-hans"])
def test_a_currency_given_in_lower_case_is_printed_as_its_code_in_every_language(language: str) -> None:
    from django.utils import translation

    with translation.override(language):
        assert money.format_with_code(999, "usd") == money.format_with_code(999, "USD")
        assert money.format_with_code(999, "usd").endswith("USD")


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (Decimal("0.2"), "USD", "$0.002"), (1000, "USD", "$10.00"), (Decimal(1000), "usd", "$10.00"),
    (Decimal("-0.2"), "USD", "-$0.002"), (Decimal("123456.5"), "USD", "$1,234.565"),
    (Decimal("1.50"), "USD", "$0.015"),  # as many places as it needs, no trailing zero
    (Decimal("0.5"), "JPY", "¥0.5"), (Decimal("0.25"), "chf", "CHF 0.0025"), (Decimal("0.5"), "KWD", "KWD 0.0005"),
    (Decimal("-123456.5"), "CHF", "-CHF 1,234.565"),
])
def test_a_unit_price_shows_the_places_below_the_minor_unit_it_has(amount, currency, text) -> None:
    assert money.format_unit_price(amount, currency) == text


@pytest.mark.parametrize(("language", "prices", "count"), [
    ("it", ["0,002\xa0USD", "1.234,565\xa0€", "0,5\xa0KRW", "10,00\xa0€"], "1.234.567"),
    ("ko", ["US$0.002", "€1,234.565", "₩0.5", "€10.00"], "1,234,567"),
])
def test_a_unit_price_and_a_count_follow_the_active_language(language, prices, count) -> None:
    from django.utils import translation

    with translation.override(language):
        assert [money.format_unit_price(amount, currency) for amount, currency in [
            (Decimal("0.2"), "USD"), (Decimal("123456.5"), "eur"), (Decimal("0.5"), "KRW"), (1000, "EUR")]] == prices
        assert money.format_quantity(1234567) == count
    assert (money.format_quantity(1234567), money.format_quantity(12)) == ("1,234,567", "12")


@pytest.mark.parametrize("missing", [None, ""])
def test_a_unit_price_without_a_currency_shows_the_number_alone(missing) -> None:
    assert money.format_unit_price(Decimal("0.2"), missing).strip() == "0.002"
    assert money.format_unit_price(1000, missing).strip() == "10.00"
