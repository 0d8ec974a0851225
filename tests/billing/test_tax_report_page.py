"""The staff page of the quarter's VAT report: the finance role's, the current quarter by
default, any other picked, the CSV download; one Query per page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from billing.models import TaxTotal
from tests.builders import make_user

pytestmark = pytest.mark.django_db
URL = "admin:staff_tax_report"


SELLER = "IT00743110157"


def ledger_item(quarter: str, sort_key: str, net: int, tax: int = 0, invoices: int = 0, *,
                seller: str | None = SELLER, name: str = "Rpay S.r.l.") -> None:
    """A ledger item keyed by its seller (``seller=None``: as written before sellers were keyed)."""
    key = f"SELLER#{seller}#{sort_key}" if seller else sort_key
    TaxTotal(TaxTotal.pk(quarter=quarter), key, Net=net, Tax=tax, Gross=net + tax, Invoices=invoices,
             SellerName=name if seller else None).save()


@pytest.fixture
def ledger(moto_table) -> None:
    ledger_item("2026Q4", "IT#22#EUR#domestic#03", 81967, 18033, 10)
    ledger_item("2026Q4", "IT#22#EUR#domestic#09", -820, -180, 0)  # a credit note issued in Q4
    ledger_item("2026Q4", "FI#25.5#EUR#oss#00", 1000, 255, 1)
    ledger_item("2026Q4", "DE#0#EUR#reverse_charge#05", 99900, 0, 1)
    ledger_item("2026Q4", "RC#DE136695976#EUR", 99900)
    ledger_item("2026Q3", "FR#20#EUR#oss#02", 5000, 1000, 5)


@pytest.fixture
def finance(client: Client) -> Client:
    client.force_login(make_user("money@rpay.localhost", staff=True, roles=["finance"]))
    return client


def at(year: int, month: int, day: int):
    return time_machine.travel(datetime(year, month, day, 12, tzinfo=UTC), tick=False)


def test_the_current_quarter_by_default(finance, ledger, ddb_requests) -> None:
    ddb_requests.reset()
    with at(2026, 11, 26):
        response = finance.get(reverse(URL))
    assert response.status_code == 200
    assert ddb_requests.ops == ["Query"]  # the quarter's ledger partition, nothing else
    html = response.content.decode()
    assert '<option value="2026Q4" selected>' in html and '<option value="2025Q1">' in html
    it = html.split('data-testid="tax-IT-22-EUR-domestic"')[1].split("</tr>")[0]
    assert "811.47 EUR" in it and "178.53 EUR" in it and ">10<" in it  # the credit note taken off
    assert "25.5%" in html.split('data-testid="tax-FI-25.5-EUR-oss"')[1].split("</tr>")[0]
    rc = html.split('data-testid="rc-DE136695976-EUR"')[1].split("</tr>")[0]
    assert "999.00 EUR" in rc
    assert "FR" not in html.split('data-testid="tax-lines"')[1].split("</table>")[0]  # Q3's, not shown
    assert reverse(URL) in html.split('class="staff-nav"')[1].split("</ul>")[0]  # the header links it


def test_another_quarter_is_picked(finance, ledger) -> None:
    with at(2026, 11, 26):
        html = finance.get(reverse(URL), {"quarter": "2026Q3"}).content.decode()
    assert '<option value="2026Q3" selected>' in html
    assert 'data-testid="tax-FR-20-EUR-oss"' in html and 'data-testid="tax-IT-22-EUR-domestic"' not in html
    assert "No reverse-charge sales in this quarter." in html


def test_an_empty_and_an_old_quarter(finance, moto_table) -> None:
    with at(2026, 11, 26):
        html = finance.get(reverse(URL), {"quarter": "2019Q2"}).content.decode()
    assert '<option value="2019Q2" selected>' in html  # offered though older than the list
    assert "No invoices or credit notes recorded in this quarter." in html


def test_a_bad_quarter_says_so_and_reads_nothing(finance, moto_table, ddb_requests) -> None:
    ddb_requests.reset()
    response = finance.get(reverse(URL), {"quarter": "2026Q5"})
    assert response.status_code == 400
    assert 'data-testid="quarter-error"' in response.content.decode()
    assert ddb_requests.ops == []


def test_the_csv_download(finance, ledger, ddb_requests) -> None:
    ddb_requests.reset()
    response = finance.get(reverse(URL), {"quarter": "2026Q4", "format": "csv"})
    assert ddb_requests.ops == ["Query"]
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="tax-report-2026Q4.csv"'
    assert response.content.decode().splitlines() == [
        "seller,country,rate,currency,treatment,net,tax,reverse_charge,vat_number",
        "IT00743110157,FI,25.5,EUR,oss,10.00,2.55,false,",
        "IT00743110157,IT,22,EUR,domestic,811.47,178.53,false,",
        "IT00743110157,DE,0,EUR,reverse_charge,999.00,0.00,true,DE136695976",
    ]


def section(html: str, seller: str) -> str:
    return html.split(f'data-testid="tax-seller-{seller}"')[1].split("</section>")[0]


def test_a_quarter_with_two_sellers_shows_a_report_for_each(finance, moto_table, ddb_requests) -> None:
    # Italy until August, Ireland after: each report its own seller's, its OSS return too;
    # totals written before the ledger named its seller stand apart, not added to either.
    ledger_item("2026Q3", "FR#20#EUR#oss#00", 5000, 1000, 5)
    ledger_item("2026Q3", "FR#20#EUR#oss#06", 2500, 500, 2, seller="IE6388047V", name="Rpay Ltd")
    ledger_item("2026Q3", "FR#20#EUR#oss#01", 100, 20, 1, seller=None)
    ddb_requests.reset()
    with at(2026, 11, 26):
        response = finance.get(reverse(URL), {"quarter": "2026Q3"})
    html = response.content.decode()
    assert response.status_code == 200, html[:3000]
    assert ddb_requests.ops == ["Query"]  # one partition, whatever the number of sellers
    italy, ireland, old = section(html, SELLER), section(html, "IE6388047V"), section(html, "not-recorded")
    assert "Rpay S.r.l. (VAT number IT00743110157)" in italy and "Rpay Ltd (VAT number IE6388047V)" in ireland
    assert "50.00 EUR" in italy.split('data-testid="tax-FR-20-EUR-oss"')[1] and "25.00" not in italy
    assert "25.00 EUR" in ireland.split('data-testid="tax-FR-20-EUR-oss"')[1] and "50.00" not in ireland
    assert "50.00 EUR" in italy.split('data-testid="oss-euro-total"')[1].split("</tr>")[0]
    assert "25.00 EUR" in ireland.split('data-testid="oss-euro-total"')[1].split("</tr>")[0]
    assert "Seller not recorded" in old and "1.00 EUR" in old


@pytest.mark.parametrize("role", ["support", "catalog"])
def test_only_finance_sees_it(client: Client, ledger, role: str) -> None:
    client.force_login(make_user(f"{role}@rpay.localhost", staff=True, roles=[role]))
    for query in ({}, {"quarter": "2026Q4", "format": "csv"}):
        response = client.get(reverse(URL), query)
        assert response.status_code == 403
        assert "DE136695976" not in response.content.decode()
    nav = client.get(reverse("admin:staff_coupons")).content.decode().split('class="staff-nav"')[1]
    assert reverse(URL) not in nav.split("</ul>")[0]  # nor is it linked for them


def test_the_oss_return_is_in_euro_at_the_ecb_rate_of_the_quarter_s_last_day(finance, moto_table) -> None:
    # a quarter's OSS sales in three currencies: never added together as they are
    ledger_item("2026Q3", "FR#20#EUR#oss#02", 5000, 1000, 5)
    ledger_item("2026Q3", "DE#19#USD#oss#04", 11355, 2157, 3)  # 113.55 USD at 1.1355 USD a euro = 100.00 EUR
    ledger_item("2026Q3", "AT#20#KWD#oss#01", 10000, 2000, 1)  # no ECB rate for the dinar
    with at(2026, 11, 26):
        response = finance.get(reverse(URL), {"quarter": "2026Q3"})
    html = response.content.decode()
    usd = html.split('data-testid="oss-euro-DE-19-USD"')[1].split("</tr>")[0]
    assert "1 EUR = 1.1355 USD (30 Sep 2026)" in usd  # the rate the ECB published on 30 September 2026
    assert "100.00 EUR" in usd and "19.00 EUR" in usd
    assert "50.00 EUR" in html.split('data-testid="oss-euro-FR-20-EUR"')[1].split("</tr>")[0]
    total = html.split('data-testid="oss-euro-total"')[1].split("</tr>")[0]
    assert "150.00 EUR" in total and "29.00 EUR" in total  # euro lines only: the dinar's is not added
    assert "KWD" in html.split('data-testid="oss-euro-unconverted-AT-KWD"')[1].split("</tr>")[0]
    assert 'data-testid="oss-euro-provisional"' not in html
