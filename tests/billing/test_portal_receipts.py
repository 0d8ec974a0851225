"""Receipts: six months grouped by month, detail (print), CSV; the money filter."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.template import Context, Template
from django.urls import reverse

from billing import access
from billing.models import Receipt, ReceiptStatus
from billing.rules.schedule import months_before
from core.money import decimal_string, format_with_code, format_with_symbol
from core.pages import today
from tests.builders import subscribe

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("amount", "currency", "shown", "plain"), [
    (999, "USD", "$9.99", "9.99"),
    (1500, "JPY", "¥1,500", "1500"),
    (123456, "CHF", "CHF 1,234.56", "1234.56"),
    (1234, "KWD", "KWD 1.234", "1.234"),
    (5, "eur", "€0.05", "0.05"),
    (-250, "GBP", "-£2.50", "-2.50"),
    (0, "USD", "$0.00", "0.00"),
])
def test_money(amount, currency, shown, plain) -> None:
    assert format_with_symbol(amount, currency) == shown
    assert decimal_string(amount, currency) == plain
    context = Context({"a": amount, "c": currency})
    assert Template("{% load money %}{{ a|money_symbol:c }}").render(context) == shown
    # The staff's format: the same number with the currency code.
    assert Template("{% load money %}{{ a|money_code:c }}").render(context) == format_with_code(amount, currency)
    assert format_with_code(amount, currency).endswith(" " + currency.upper())


def test_money_filters_never_break_a_page() -> None:
    for name in ("money_symbol", "money_code"):
        assert Template("{% load money %}[{{ a|" + name + ":'USD' }}]").render(Context({"a": "junk"})) == "[]"


@pytest.fixture
def history(customer):
    """Receipts on both sides of the six-month window, one refunded, in two currencies."""
    news = subscribe(customer, "NEWS-DAILY", day=3, on=today() - timedelta(days=300))
    tea = subscribe(customer, "TEA-JP", day=3, amount=1500, currency="JPY", on=today() - timedelta(days=300))
    made = {}
    for days_ago in (10, 40, 70, 100, 130, 160, 250):
        billed = today() - timedelta(days=days_ago)
        made[days_ago], _ = access.create_receipt(news, billing_date=billed, amount=999, currency="USD",
                                                  charge_id=f"ch_{days_ago}", retention_days=settings.RECEIPT_RETENTION_DAYS)
    access.create_receipt(tea, billing_date=today() - timedelta(days=10), amount=1500, currency="JPY",
                          charge_id="ch_tea", retention_days=settings.RECEIPT_RETENTION_DAYS)
    # staff refunded part of one payment
    made[40].update(actions=[Receipt.Status.set(ReceiptStatus.PARTIALLY_REFUNDED), Receipt.RefundedAmount.set(500)])
    return made


def test_receipts_page(customer, history, ddb_requests) -> None:
    ddb_requests.reset()
    response = customer.client.get("/receipts/")
    assert ddb_requests.ops == ["Query"]
    months = response.context["months"]
    shown = [r.BillingDate for m in months for r in m["receipts"]]
    assert shown == sorted(shown, reverse=True)  # newest first
    start = months_before(today(), 6)
    assert all(d >= start.isoformat() for d in shown) and len(shown) == 7  # 6 USD in window + 1 JPY
    assert (today() - timedelta(days=250)).isoformat() not in shown
    newest = months[0]
    assert newest["month"].strftime("%Y-%m") == shown[0][:7]
    html = response.content.decode()
    assert "Partially refunded" in html and "refunded $5.00" in html and "¥1,500" in html
    refunded_month = next(m for m in months if any(r.RefundedAmount for r in m["receipts"]))
    assert dict(refunded_month["totals"])["USD"] == sum(999 - (r.RefundedAmount or 0)
                                                        for r in refunded_month["receipts"] if r.Currency == "USD")


def test_receipt_detail_prints_cleanly(customer, history, ddb_requests) -> None:
    receipt = history[40]
    assert reverse("receipt", args=[receipt.url_id]) == f"/receipts/{receipt.Number}/"
    ddb_requests.reset()
    response = customer.client.get(reverse("receipt", args=[receipt.url_id]))
    assert ddb_requests.ops == ["GetItem", "GetItem"]  # the number's look-up item, the receipt
    html = response.content.decode()
    assert "$9.99" in html and "Visa ending in 4242" in html and "ch_40" in html
    assert f'data-testid="receipt-number">{receipt.Number}<' in html
    assert 'data-testid="refunded">$5.00' in html and "$4.99" in html
    # the Print button's handler is a static script: the Content-Security-Policy allows no onclick
    assert "data-print-page" in html and "js/print.js" in html
    assert "window.print()" in (settings.BASE_DIR / "static" / "js" / "print.js").read_text()
    css = (settings.BASE_DIR / "static" / "css" / "rpay.css").read_text()
    assert "@media print" in css and ".navbar" in css


def test_expired_and_unknown_receipts_are_404(customer, history) -> None:
    expired = history[160]
    # 250 days ago is past RECEIPT_RETENTION_DAYS: moto keeps the item, the portal hides it
    assert customer.client.get(reverse("receipt", args=[history[250].SK])).status_code == 404
    assert customer.client.get(reverse("receipt", args=[expired.url_id])).status_code == 200
    assert customer.client.get(reverse("receipt_pdf", args=[expired.url_id])).status_code == 200
    expired.update(actions=[Receipt.TTL.set(datetime.now(tz=UTC) - timedelta(days=1))])
    assert customer.client.get(reverse("receipt", args=[expired.url_id])).status_code == 404
    assert customer.client.get(reverse("receipt_pdf", args=[expired.url_id])).status_code == 404
    assert customer.client.get(reverse("receipt", args=[expired.SK])).status_code == 404
    assert customer.client.get("/receipts/nothing/").status_code == 404
    assert customer.client.get(reverse("receipt", args=["REC#2020-01-01#SKU#X#SUB#y"])).status_code == 404


def test_receipts_csv(customer, history, ddb_requests) -> None:
    ddb_requests.reset()
    response = customer.client.get("/receipts/export.csv")
    assert ddb_requests.ops == ["Query"]
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 7
    by_charge = {r["charge_id"]: r for r in rows}
    assert by_charge["ch_10"]["amount"] == "9.99" and by_charge["ch_tea"]["amount"] == "1500"
    assert by_charge["ch_10"]["number"] == history[10].Number  # the receipt's number, first column
    assert by_charge["ch_40"]["status"] == "partially_refunded" and by_charge["ch_40"]["refunded_amount"] == "5.00"
    # no card details at all (sub ids are random hex, so look for the brand and the columns)
    assert "Visa" not in response.content.decode() and not any("card" in c for c in rows[0])


def test_no_receipts(customer) -> None:
    assert "No payments in the last six months" in customer.client.get("/receipts/").content.decode()
    rows = list(csv.reader(io.StringIO(customer.client.get("/receipts/export.csv").content.decode())))
    assert len(rows) == 1


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://evil\")", "+1+2", "-3", "@SUM(A1)", "\tTab", "\rCR"])
def test_receipts_csv_cells_never_run_as_formulas(customer, name) -> None:
    """OWASP CSV injection: a product name a spreadsheet would run is written with a
    leading quote; the customer still reads the name."""
    sub = subscribe(customer)
    access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_x",
                          retention_days=200)
    sub.ProductName = name  # a receipt copies the product's name at payment time
    access.create_receipt(sub, billing_date=today() - timedelta(days=1), amount=999, currency="USD",
                          charge_id="ch_y", retention_days=200)
    rows = list(csv.DictReader(io.StringIO(customer.client.get("/receipts/export.csv").content.decode())))
    named = {r["charge_id"]: r["product"] for r in rows}
    assert named["ch_y"] == "'" + name
    assert named["ch_x"] == "News-Daily"  # ordinary names untouched
