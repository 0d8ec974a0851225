"""The OSS return in euro (billing/rules/oss_euro.py): the ECB's rate of the period's last
day, or its next publication; rounding per line; a currency without an ECB rate left out
of the sums; a quarter whose rate is not published yet marked provisional."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from billing.rules.oss_euro import EuroRate, ecb_rate, oss_return, quarter_last_day, to_cents
from billing.rules.tax_report import LedgerRow, build_report


def test_each_quarter_s_last_day() -> None:
    assert [quarter_last_day(f"2028Q{n}") for n in range(1, 5)] == [
        date(2028, 3, 31), date(2028, 6, 30), date(2028, 9, 30), date(2028, 12, 31)]


def test_a_last_day_without_a_publication_takes_the_next_publication() -> None:
    # 31 March 2024 was Easter Sunday and 1 April Easter Monday: the ECB next published on 2 April
    rate = ecb_rate("USD", date(2024, 3, 31))
    assert rate is not None and rate.published == date(2024, 4, 2) and not rate.provisional
    assert rate.per_euro == Decimal("1.0749")


def test_a_rate_not_published_yet_is_the_latest_and_provisional() -> None:
    rate = ecb_rate("USD", date(2099, 12, 31))
    assert rate is not None and rate.provisional and rate.published < date(2099, 12, 31)


def test_no_rate_for_the_euro_itself_nor_for_a_currency_the_ecb_does_not_publish() -> None:
    assert ecb_rate("EUR", date(2026, 9, 30)) is None
    assert ecb_rate("KWD", date(2026, 9, 30)) is None


def test_rounding_is_half_up_per_line_and_in_each_currency_s_own_minor_unit() -> None:
    usd = EuroRate("USD", Decimal("2"), date(2026, 9, 30), provisional=False)
    assert to_cents(1, "USD", usd) == 1  # 0.005 EUR: half up
    assert to_cents(-1, "USD", usd) == -1  # a credit note's: away from zero
    jpy = EuroRate("JPY", Decimal("160"), date(2026, 9, 30), provisional=False)
    assert to_cents(16000, "JPY", jpy) == 10000  # ¥16,000 (no minor unit) = 100.00 EUR


@given(st.lists(st.tuples(st.sampled_from(["DE", "FR", "IT"]), st.sampled_from(["EUR", "USD", "GBP", "JPY", "KWD"]),
                          st.integers(-10**9, 10**9), st.integers(-10**8, 10**8)), max_size=12))
def test_the_totals_are_the_sum_of_the_converted_lines_and_only_oss_lines_count(rows) -> None:
    ledger = [LedgerRow(country=c, rate="20", currency=cur, treatment="oss", net=n, tax=t) for c, cur, n, t in rows]
    ledger.append(LedgerRow(country="IE", rate="23", currency="EUR", treatment="domestic", net=999, tax=230))
    euro = oss_return(build_report("2026Q3", ledger))
    assert euro.net_cents == sum(e.net_cents for e in euro.lines)
    assert euro.tax_cents == sum(e.tax_cents for e in euro.lines)
    assert all(line.line.treatment == "oss" for line in euro.lines)
    assert {line.currency for line in euro.unconverted} <= {"KWD"}
    assert all(e.line.net == e.net_cents for e in euro.lines if e.line.currency == "EUR")
