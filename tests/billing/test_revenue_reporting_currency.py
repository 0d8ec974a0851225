"""The revenue page's reporting currency: MRR added up at the ECB's reference rates from the
one rate source the OSS return uses too (core/ecb_rates.py), each currency on its own line
with its rate and date; ``manage.py load_ecb_rates`` installs a newer ECB file (checked
first, safe to re-run, one line and exit 1 on a bad file), else the bundled one is read."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from billing.analytics.reporting import convert, cross_rate, in_reporting_currency
from billing.rules.oss_euro import ecb_rate
from core import ecb_rates
from tests.billing.test_revenue_analytics import URL, on, scenario, staff  # noqa: F401 (scenario: a fixture)

ROOT = Path(__file__).resolve().parents[2]
# The ECB's format, cut down: newest day first, a trailing comma, N/A for no rate.
ECB_CSV = """Date,USD,JPY,GBP,KWD,
2027-04-20,1.2500,165.00,0.8000,N/A,
2027-03-31,1.2000,160.00,0.8000,N/A,
2027-03-30,1.1000,150.00,0.8500,N/A,
"""


@pytest.fixture
def loaded(settings, tmp_path) -> Path:
    settings.ECB_RATES_FILE = str(tmp_path / "var" / "ecb" / "eurofxref-hist.zip")
    source = tmp_path / "eurofxref-hist.csv"
    source.write_text(ECB_CSV)
    out = io.StringIO()
    call_command("load_ecb_rates", str(source), stdout=out)
    assert out.getvalue().strip() == (f"Loaded 3 days of ECB rates, 2027-03-30 to 2027-04-20, 3 currencies, "
                                      f"into {settings.ECB_RATES_FILE}")
    return source


def test_the_loaded_file_is_the_one_source_of_both_conversions(loaded, settings) -> None:
    rate = ecb_rate("USD", date(2027, 3, 31))  # the OSS return's rule reads the loaded rates
    assert (rate.per_euro, rate.published, rate.provisional) == (Decimal("1.2"), date(2027, 3, 31), False)
    converted = in_reporting_currency({"USD": 1400, "EUR": 2000, "JPY": 16000}, "EUR", date(2027, 3, 31))
    assert [(line.currency, line.rate, line.converted) for line in converted.lines] == [
        ("EUR", Decimal(1), 2000), ("JPY", Decimal("160"), 10000), ("USD", Decimal("1.2"), 1167)]
    assert converted.total == 2000 + 10000 + 1167
    # run again with the same file (and with its zip): the same rates
    call_command("load_ecb_rates", str(loaded), stdout=io.StringIO())
    archive = loaded.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("eurofxref-hist.csv", ECB_CSV)
    call_command("load_ecb_rates", str(archive), stdout=io.StringIO())
    assert ecb_rate("USD", date(2027, 3, 31)).per_euro == Decimal("1.2")


def test_another_reporting_currency_goes_through_the_euro(loaded) -> None:
    converted = in_reporting_currency({"EUR": 1000, "GBP": 800, "KWD": 500}, "USD", date(2027, 3, 31))
    lines = {line.currency: line for line in converted.lines}
    assert (lines["EUR"].rate, lines["EUR"].converted) == (Decimal("0.833333"), 1200)  # 10.00 EUR = 12.00 USD
    assert (lines["GBP"].rate, lines["GBP"].converted) == (Decimal("0.666667"), 1200)  # 1 USD = 0.8/1.2 GBP
    assert converted.unconverted == ("KWD",) and lines["KWD"].converted is None
    assert converted.total == 2400


@pytest.mark.parametrize(("content", "why"), [
    (b"", "the first line is not the ECB's header"),
    (b"Date,USD\n", "no day of rates"),
    (b"Date,USD\n2027-13-45,1.2\n", "a line is not a day's rates"),
    (b"Date,USD\n2027-03-31,abc\n", "a line is not a day's rates"),
    (b"PK\x03\x04garbage", "not a zip or a UTF-8 CSV file"),
    (b"\xff\xfe\x00", "not a zip or a UTF-8 CSV file"),
])
def test_a_bad_file_changes_nothing(loaded, settings, tmp_path, content, why) -> None:
    before = Path(settings.ECB_RATES_FILE).read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    with pytest.raises(CommandError, match=why):
        call_command("load_ecb_rates", str(bad))
    assert Path(settings.ECB_RATES_FILE).read_bytes() == before
    assert ecb_rate("USD", date(2027, 3, 31)).per_euro == Decimal("1.2")


def test_the_command_says_one_line_and_exits_1(tmp_path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("not,rates\n")
    done = subprocess.run([sys.executable, "manage.py", "load_ecb_rates", str(bad)], cwd=ROOT, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "ECB_RATES_FILE": str(tmp_path / "r.zip")},
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "not an ECB rates file" in done.stderr
    assert not (tmp_path / "r.zip").exists()


def test_without_a_loaded_file_the_bundled_history_is_read(settings, tmp_path) -> None:
    settings.ECB_RATES_FILE = str(tmp_path / "none.zip")
    assert ecb_rates.rates_file() == ecb_rates.bundled_file()
    assert ecb_rate("USD", date(2024, 3, 31)).per_euro == Decimal("1.0749")


def test_the_page_shows_each_line_its_rate_and_date_and_the_total(loaded, client: Client, scenario) -> None:  # noqa: F811
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        response = client.get(reverse(URL), {"month": "2027-03"})
    html = response.content.decode()
    usd = html.split('data-testid="reporting-USD"')[1].split("</tr>")[0]
    assert "14.00 USD" in usd and "1.2" in usd and "2027-03-31" in usd and "11.67 EUR" in usd
    assert "31.67 EUR" in html.split('data-testid="reporting-total"')[1].split("</tr>")[0]
    assert response.context["report"].as_dict()["mrr_reporting"]["total"] == 3167


@given(st.dictionaries(st.sampled_from(["USD", "JPY", "GBP", "EUR"]), st.integers(0, 10**9), max_size=4),
       st.sampled_from([Decimal("1.2"), Decimal("160"), Decimal("0.8")]))
def test_a_total_is_its_lines_and_a_rate_of_one_changes_nothing(amounts: dict, rate: Decimal) -> None:
    for currency, amount in amounts.items():
        assert convert(amount, currency, currency, Decimal(1)) == amount
        # half up, never more than half a minor unit off
        exact = Decimal(amount) / rate
        assert abs(convert(amount, currency, currency, rate) - exact) <= Decimal("0.5")
    converted = in_reporting_currency(amounts, "EUR", date(2024, 3, 28))
    assert converted.total == sum(line.converted or 0 for line in converted.lines)
    assert [line.currency for line in converted.lines] == sorted(amounts)


def test_a_reporting_currency_without_ecb_rates_is_refused_at_start(settings) -> None:
    from billing.checks import check_revenue_reporting_currency

    assert check_revenue_reporting_currency() == []  # EUR, the default
    settings.REVENUE_REPORTING_CURRENCY = "KWD"  # the ECB publishes no rate for the dinar
    [error] = check_revenue_reporting_currency()
    assert error.id == "billing.E008" and "'KWD'" in error.msg
    settings.REVENUE_REPORTING_CURRENCY = "USD"
    assert check_revenue_reporting_currency() == []


def test_the_command_repairs_a_rates_file_the_checks_refuse(tmp_path) -> None:
    broken = tmp_path / "r.zip"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    good = tmp_path / "eurofxref-hist.csv"
    good.write_text(ECB_CSV)
    env = {"PATH": "/usr/bin:/bin", "ECB_RATES_FILE": str(broken)}
    check = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                           env=env, timeout=120)
    assert check.returncode == 1 and "billing.E008" in check.stderr
    done = subprocess.run([sys.executable, "manage.py", "load_ecb_rates", str(good)], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=120).returncode == 0


def _in_euro(amount: int, rate: str) -> int:
    return convert(amount, "USD", "EUR", Decimal(rate))


def test_the_months_movements_in_the_reporting_currency_add_up_with_the_rates_change(
        loaded, client: Client, scenario) -> None:  # noqa: F811
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        response = client.get(reverse(URL), {"month": "2027-03"})
        csv = client.get(reverse(URL), {"month": "2027-03", "format": "csv", "table": "reporting-movements"})
    report = response.context["report"]
    rows = {m.month: m for m in report.movements_reporting}
    march, usd, eur = rows["2027-03"], *(report.months[-1].by_currency[c] for c in ("USD", "EUR"))
    # the opening at the rates of the day before March (28 February, before the file's
    # first day: the latest rate, provisional), the movements and the closing at 31
    # March's (1.20); the euro as it is
    before = cross_rate("USD", "EUR", date(2027, 2, 28))
    assert before is not None and before[0] == Decimal("1.25") and before[2]  # provisional
    assert march.opening == _in_euro(usd.opening, "1.25") + eur.opening
    assert march.closing == _in_euro(usd.closing, "1.2") + eur.closing
    assert march.new == _in_euro(usd.new, "1.2") + eur.new and march.churn == _in_euro(usd.churn, "1.2") + eur.churn
    for m in report.movements_reporting:  # the identity, every month, to the cent
        assert m.opening + m.new + m.expansion + m.reactivation - m.contraction - m.churn + m.fx == m.closing
        assert m.unconverted == ()
    # each month opens where the one before closed: both at the same day's rates
    assert rows["2027-02"].closing == march.opening
    html = response.content.decode()
    row = html.split('data-testid="move-reporting-2027-03"')[1].split("</tr>")[0]
    assert march.fx == 30 and "0.30 EUR" in row and "Exchange rates" in html
    assert csv.status_code == 200 and csv.content.decode().splitlines()[0] == (
        "month,opening_EUR,new_EUR,expansion_EUR,reactivation_EUR,contraction_EUR,churn_EUR,fx_EUR,closing_EUR,"
        "left_out")
    assert response.context["report"].as_dict()["movements_reporting"][-1]["fx"] == march.fx
