"""``manage.py tax_report``: the quarter's VAT from its ledger items, as a table, CSV or JSON;
a bad quarter is one line and a non-zero exit; the report is one Query."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from billing.models import TaxTotal
from devtools.localengine import free_port

pytestmark = pytest.mark.django_db(databases=[])
ROOT = Path(__file__).resolve().parents[2]


def command(*args: str) -> str:
    out = StringIO()
    call_command("tax_report", *args, stdout=out)
    return out.getvalue()


SELLER = "IT00743110157"


def ledger_item(quarter: str, sort_key: str, net: int, tax: int = 0, invoices: int = 0, *,
                seller: str | None = SELLER, name: str = "Rpay S.r.l.") -> None:
    """A ledger item as the payment run leaves it (the tests' own write): keyed by its
    seller, or, ``seller=None``, as written before the seller was in the key."""
    key = f"SELLER#{seller}#{sort_key}" if seller else sort_key
    TaxTotal(TaxTotal.pk(quarter=quarter), key, Net=net, Tax=tax, Gross=net + tax, Invoices=invoices,
             SellerName=name if seller else None).save()


@pytest.fixture
def quarter_sold(moto_table) -> None:
    """2026Q4: Italian consumers on two shards, one credit note among them; a French
    consumer through the OSS; a German business reverse charged; yen in Japan. 2026Q3 too,
    which the Q4 report leaves out."""
    ledger_item("2026Q4", "IT#22#EUR#domestic#03", 81967, 18033, 10)
    ledger_item("2026Q4", "IT#22#EUR#domestic#11", 8197 - 820, 1803 - 180, 0)  # a sale and a credit note
    ledger_item("2026Q4", "FR#20#EUR#oss#00", 833, 166, 1)
    ledger_item("2026Q4", "DE#0#EUR#reverse_charge#05", 99900, 0, 1)
    ledger_item("2026Q4", "RC#DE136695976#EUR", 99900)
    ledger_item("2026Q4", "JP#10#JPY#registered#01", 1364, 136, 1)
    ledger_item("2026Q3", "IT#22#EUR#domestic#00", 500000, 110000, 50)


def test_json_lists_each_line_with_amounts_as_decimal_strings(quarter_sold) -> None:
    assert json.loads(command("--quarter", "2026Q4", "--format", "json")) == [
        {"seller": SELLER, "country": "FR", "rate": "20", "net": "8.33", "tax": "1.66", "currency": "EUR", "reverse_charge": False,
         "treatment": "oss"},
        {"seller": SELLER, "country": "IT", "rate": "22", "net": "893.44", "tax": "196.56", "currency": "EUR",
         "reverse_charge": False, "treatment": "domestic"},
        {"seller": SELLER, "country": "JP", "rate": "10", "net": "1364", "tax": "136", "currency": "JPY", "reverse_charge": False,
         "treatment": "registered"},
        {"seller": SELLER, "country": "DE", "rate": "0", "net": "999.00", "tax": "0.00", "currency": "EUR", "reverse_charge": True,
         "treatment": "reverse_charge", "vat_number": "DE136695976"},
    ]


def test_csv_has_a_header_row(quarter_sold) -> None:
    assert command("--quarter", "2026q4", "--format", "csv").splitlines() == [
        "seller,country,rate,currency,treatment,net,tax,reverse_charge,vat_number",
        "IT00743110157,FR,20,EUR,oss,8.33,1.66,false,",
        "IT00743110157,IT,22,EUR,domestic,893.44,196.56,false,",
        "IT00743110157,JP,10,JPY,registered,1364,136,false,",
        "IT00743110157,DE,0,EUR,reverse_charge,999.00,0.00,true,DE136695976",
    ]


def test_the_table_shows_each_table(quarter_sold) -> None:
    lines = command("--quarter", "2026Q4").splitlines()
    assert lines[0] == ("VAT 2026Q4, seller Rpay S.r.l. (IT00743110157): invoices less credit notes, "
                        "per country and rate")
    assert lines[1].split() == ["country", "rate", "%", "treatment", "currency", "net", "tax", "invoices"]
    assert [line.split() for line in lines[2:6]] == [
        ["DE", "0", "reverse_charge", "EUR", "999.00", "0.00", "1"],
        ["FR", "20", "oss", "EUR", "8.33", "1.66", "1"],
        ["IT", "22", "domestic", "EUR", "893.44", "196.56", "10"],
        ["JP", "10", "registered", "JPY", "1364", "136", "1"],
    ]
    # the OSS return in euro (its one line is in euro already); 2026Q4's rate is not bundled yet
    assert lines[7].startswith("OSS return 2026Q4 in euro, at the ECB's rate for 2026-12-31")
    assert lines[9].split() == ["FR", "20", "EUR", "8.33", "1.66"]
    assert lines[10].split() == ["total", "8.33", "1.66"]
    assert lines[12] == "Reverse charge 2026Q4, per customer's VAT number"
    assert lines[14].split() == ["DE136695976", "DE", "EUR", "999.00"]


def test_an_empty_quarter(moto_table) -> None:
    assert json.loads(command("--quarter", "2027Q1", "--format", "json")) == []
    assert command("--quarter", "2027Q1", "--format", "csv") == (
        "seller,country,rate,currency,treatment,net,tax,reverse_charge,vat_number\r\n")
    assert command("--quarter", "2027Q1") == "2027Q1: no invoices or credit notes recorded.\n"


def test_the_report_is_one_query(quarter_sold, ddb_requests) -> None:
    ddb_requests.reset()
    command("--quarter", "2026Q4", "--format", "json")
    assert ddb_requests.ops == ["Query"]  # the quarter's partition; never a Scan


def test_two_sellers_in_a_quarter_are_two_reports_and_old_totals_a_third(moto_table) -> None:
    # The seller moved from Italy to Ireland in the quarter; totals written before the
    # ledger named its seller come last, their seller not recorded.
    ledger_item("2027Q1", "FR#20#EUR#oss#00", 833, 166, 1)
    ledger_item("2027Q1", "FR#20#EUR#oss#04", 1666, 332, 2, seller="IE6388047V", name="Rpay Ltd")
    ledger_item("2027Q1", "RC#DE136695976#EUR", 500, seller="IE6388047V", name="Rpay Ltd")
    ledger_item("2027Q1", "FR#20#EUR#oss#09", 100, 20, 1, seller=None)
    table = command("--quarter", "2027Q1")
    titles = [line for line in table.splitlines() if line.startswith("VAT 2027Q1")]
    assert titles == [
        "VAT 2027Q1, seller Rpay Ltd (IE6388047V): invoices less credit notes, per country and rate",
        "VAT 2027Q1, seller Rpay S.r.l. (IT00743110157): invoices less credit notes, per country and rate",
        "VAT 2027Q1, seller not recorded (totals written before the ledger named its seller): invoices less "
        "credit notes, per country and rate"]
    assert command("--quarter", "2027Q1", "--format", "csv").splitlines()[1:] == [
        "IE6388047V,FR,20,EUR,oss,16.66,3.32,false,",
        "IE6388047V,DE,0,EUR,reverse_charge,5.00,0.00,true,DE136695976",
        "IT00743110157,FR,20,EUR,oss,8.33,1.66,false,",
        ",FR,20,EUR,oss,1.00,0.20,false,"]
    assert [line["seller"] for line in json.loads(command("--quarter", "2027Q1", "--format", "json"))] == [
        "IE6388047V", "IE6388047V", "IT00743110157", None]


@pytest.mark.parametrize("quarter", ["2026Q5", "Q4-2026"])
def test_a_bad_quarter_is_one_line_and_non_zero(quarter) -> None:
    env = {**os.environ, "DYNAMODB_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    proc = subprocess.run([sys.executable, "manage.py", "tax_report", "--quarter", quarter, "--format", "json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        f"CommandError: --quarter {quarter!r} is not a quarter: give it as YYYYQn, n from 1 to 4 (e.g. 2026Q4)"]
    assert proc.stdout == ""
