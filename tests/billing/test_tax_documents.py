"""A receipt with its tax figures is an invoice: its page and its PDF carry every field
Article 226 of the VAT Directive asks for (number, date, the seller's and the customer's
names, addresses and VAT numbers, each line's description, period, net, rate, VAT and
gross, the totals per rate, the currency, the reverse-charge or "not subject" wording),
from the receipt's own snapshot, never today's settings; in Italian too. A refund's
credit note has its page, PDF and e-mail; an old receipt shows as before."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.urls import reverse
from django.utils import translation

from billing import access
from billing.models import Receipt
from billing.notify import send_credit_note
from billing.operations.payments import receipt_subject
from billing.operations.refunds import refund_receipt
from billing.rules.invoice import credit_note_of, invoice_of
from billing.rules.tax import REVERSE_CHARGE_NOTE, Buyer, Seller, applicable_rate, tax_line
from billing.views.receipt_pdf import render_credit_note_pdf, render_receipt_pdf
from core.countries import country_name
from core.localformat import local_date
from core.mail import send_customer_email
from core.pages import today
from tests.billing.test_portal_receipt_pages import SELLER
from tests.builders import TEST_CARD, make_user, paid_receipt, subscribe

pytestmark = pytest.mark.django_db

# Days whose dates are long, short, leap and at a year's end: an invoice's period is built
# from today, and a test must pass on every day of the year, not only on today's.
PINNED_DAYS = [date(2027, 1, 31), date(2028, 2, 29), date(2026, 12, 4), date(2026, 12, 31)]


@pytest.fixture(autouse=True)
def pinned_day(request: pytest.FixtureRequest) -> Iterator[date]:
    """Every test here runs on a fixed day (the one a test asks for with ``day``, else
    4 December 2026, whose period "4 December 2026 – 3 January 2027" once broke a date
    across two lines of the PDF)."""
    day = getattr(request, "param", date(2026, 12, 4))
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        yield day

SELLER_NAME = "Rossi Abbonamenti S.r.l."
SELLER_ADDRESS = "Via Roma 1\n20121 Milano"
SELLER_VAT = "IT00743110157"
ITALY = Seller(country="IT", vat_number=SELLER_VAT, registrations={"JP": Decimal("10")})
CUSTOMER_ADDRESS = "Giulia Bianchi\nVia Verdi 3\n00184 Roma"
GERMAN_VAT = "DE136695976"


@dataclass(frozen=True)
class Case:
    buyer: Buyer
    amount: int
    currency: str
    net: str
    rate: str
    tax: str
    gross: str
    note: str | None


CASES = {
    "domestic": Case(Buyer("IT"), 1220, "EUR", "€10.00", "22%", "€2.20", "€12.20", None),
    "oss": Case(Buyer("FR"), 1200, "EUR", "€10.00", "20%", "€2.00", "€12.00", None),
    "reverse_charge": Case(Buyer("DE", GERMAN_VAT), 1000, "EUR", "€10.00", "0%", "€0.00", "€10.00",
                           REVERSE_CHARGE_NOTE),
    "not_subject": Case(Buyer("US"), 999, "USD", "$9.99", "0%", "$0.00", "$9.99", "Not subject to EU VAT"),
    "zero_decimals": Case(Buyer("JP"), 1100, "JPY", "¥1,000", "10%", "¥100", "¥1,100", None),
}


def invoice_receipt(customer, case: Case, *, address: str = CUSTOMER_ADDRESS) -> Receipt:
    """A paid receipt with the tax the payment run writes with it (billing.rules.tax's
    rate for the buyer, the charge split into net and tax, the seller's snapshot)."""
    account = access.get_account(customer.account_id)
    start = today()
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=case.amount, currency=case.currency, card=TEST_CARD,
        today=start, reminder_days_before=7, product_name="News-Daily", billing_address=address)
    line = tax_line(case.amount, applicable_rate(ITALY, case.buyer, start), prices_include_tax=True)
    tax = access.InvoiceTax(line=line, prices_include_tax=True,
                            seller=access.InvoiceSeller(ITALY, SELLER_NAME, SELLER_ADDRESS),
                            buyer_country=case.buyer.country, buyer_vat_number=case.buyer.vat_number)
    receipt, _ = access.create_receipt(sub, billing_date=start, amount=case.amount, currency=case.currency,
                                       charge_id="ch_tax", retention_days=200, period_end=start + timedelta(days=30),
                                       tax=tax)
    return receipt


def article_226_fields(receipt: Receipt, case: Case, day_format: str = "j F Y") -> list[str]:
    start, end = receipt.PeriodStart, receipt.PeriodEnd
    fields = [receipt.Number, local_date(receipt.ProcessedDate, day_format), SELLER_NAME, "Via Roma 1",
              "20121 Milano", country_name("IT"), SELLER_VAT, country_name(case.buyer.country), "Giulia Bianchi", "Via Verdi 3", "00184 Roma", receipt.ProductName,
              local_date(start, day_format), local_date(end, day_format), case.net, case.rate, case.tax, case.gross,
              case.currency]
    if case.buyer.vat_number:
        fields.append(case.buyer.vat_number)
    return fields


def pdf_lines(content: bytes, tmp_path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is missing: apt-get install poppler-utils")
    pdf = tmp_path / "document.pdf"
    pdf.write_bytes(content)
    text = subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, check=True,
                          timeout=60).stdout.decode()
    return text.replace("\xa0", " ")  # a date's no-break spaces (it never wraps inside itself)


@pytest.mark.parametrize("pinned_day", PINNED_DAYS, indirect=True, ids=str)
def test_an_invoice_period_breaks_between_its_dates_never_inside_one(customer, pinned_day, tmp_path) -> None:
    receipt = invoice_receipt(customer, CASES["domestic"])
    start, end = local_date(receipt.PeriodStart, "j F Y"), local_date(receipt.PeriodEnd, "j F Y")
    assert receipt.PeriodStart == pinned_day.isoformat()
    lines = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content, tmp_path).splitlines()
    assert any(line.endswith(start + " –") or line.endswith(f"{start} – {end}") for line in lines), lines
    assert any(end in line for line in lines), lines


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_invoice_page_and_pdf_carry_every_article_226_field(customer, settings, kind, tmp_path) -> None:
    settings.RPAY_SELLER = SELLER  # today's settings: never on the invoice
    case = CASES[kind]
    receipt = invoice_receipt(customer, case)
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    text = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content, tmp_path)
    for where, content in (("page", html), ("pdf", text)):
        assert "Invoice" in content, where
        for value in article_226_fields(receipt, case):
            assert value in content, (where, value)
        if case.note:
            assert case.note in content, where
        else:
            assert "Reverse charge" not in content and "Not subject" not in content, where
        assert SELLER["name"] not in content and SELLER["tax_id"] not in content, where
    assert 'data-testid="document-gross">' + case.gross + "<" in html


def test_an_invoice_is_dated_on_its_billing_day_not_its_utc_day(customer, settings, tmp_path) -> None:
    # Paid at 01:00 in Tokyo on 5 December, still the 4th in UTC (the stored timestamp's
    # day): the invoice is dated the 5th, the day its tax was chosen for and its period begins.
    settings.BILLING_TIMEZONE = "Asia/Tokyo"
    with time_machine.travel(datetime(2026, 12, 4, 16, tzinfo=UTC), tick=False):
        receipt = invoice_receipt(customer, CASES["domestic"])
    assert receipt.ProcessedDate.startswith("2026-12-04T16") and receipt.PeriodStart == "2026-12-05"
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    text = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content, tmp_path)
    assert 'data-testid="document-date">5 December 2026<' in html
    assert "Paid 5 December 2026" in html
    assert "Date of issue 5 December 2026" in text and "Date paid 5 December 2026" in text, text
    for where, content in (("page", html), ("pdf", text)):
        assert "4 December 2026" not in content, where


@pytest.mark.parametrize("kind", ["domestic", "reverse_charge", "not_subject"])
def test_an_italian_invoice_is_a_fattura(customer, kind, tmp_path) -> None:
    case = CASES[kind]
    receipt = invoice_receipt(customer, case)
    customer.client.cookies["django_language"] = "it"
    html = customer.client.get(f"/receipts/{receipt.Number}/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    text = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/", HTTP_ACCEPT_LANGUAGE="it").content,
                     tmp_path)
    with translation.override("it"):
        fields = article_226_fields(receipt, case)
    italian = {"€10.00": "10,00\xa0€", "€2.20": "2,20\xa0€", "€12.20": "12,20\xa0€", "€0.00": "0,00\xa0€",
               "$9.99": "9,99\xa0USD", "$0.00": "0,00\xa0USD"}  # CLDR's no-break space
    fields = [italian.get(value, value) for value in fields]
    for where, content in (("page", html), ("pdf", text)):
        content = content.replace("\xa0", " ")  # the page's no-break spaces are plain in the PDF's text
        assert "Fattura" in content and "Imponibile" in content and "IVA" in content, where
        for value in fields:
            assert value.replace("\xa0", " ") in content, (where, value)
    if kind == "reverse_charge":
        assert "Inversione contabile — art. 196 Direttiva 2006/112/CE" in html
        assert "Inversione contabile" in text
    if kind == "not_subject":
        assert "Non soggetto" in html


def test_an_old_receipt_without_tax_figures_is_shown_as_before(customer, settings, tmp_path) -> None:
    settings.RPAY_SELLER = SELLER
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_o",
                                       retention_days=200, period_end=today())
    # as written before taxes were kept: no tax attributes at all
    receipt.update(actions=[getattr(Receipt, name).remove() for name in (
        "Net", "Tax", "TaxRate", "TaxCountry", "TaxTreatment", "PricesIncludeTax", "TaxLines", "Seller", "BuyerCountry",
        "BuyerVatNumber", "BuyerName")])
    assert invoice_of(receipt) is None
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    assert "Invoice" not in html and SELLER["tax_id"] in html and 'data-testid="tax-document"' not in html
    response = customer.client.get(f"/receipts/{receipt.Number}/pdf/")
    assert response["Content-Disposition"] == f'attachment; filename="rpay-receipt-{receipt.Number}.pdf"'
    text = pdf_lines(response.content, tmp_path)
    assert "Receipt number" in text and "Invoice" not in text


def refunded_with_note(customer, case: Case, amount: int):
    """An invoice refunded in part, and the credit note the refund issued with it."""
    receipt = invoice_receipt(customer, case)
    receipt, _ = access.record_refund(receipt, refund_id="re_tax", amount=amount, actor="staff", reason="Goodwill")
    [note] = access.credit_notes_of_receipt(receipt)
    return receipt, note


def test_a_credit_note_has_its_page_pdf_and_links_from_the_invoice(customer, tmp_path) -> None:
    receipt, note = refunded_with_note(customer, CASES["domestic"], 610)  # half: 5.00 net, 1.10 VAT
    assert (note.Net, note.Tax, note.Gross) == (-500, -110, -610)
    invoice_page = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    assert f'href="/credit-notes/{note.Number}/"' in invoice_page
    list_page = customer.client.get("/receipts/").content.decode()
    assert f'href="/credit-notes/{note.Number}/"' in list_page
    html = customer.client.get(f"/credit-notes/{note.Number}/").content.decode()
    for value in (note.Number, receipt.Number, f'href="/receipts/{receipt.Number}/"', SELLER_NAME, SELLER_VAT,
                  "Giulia Bianchi", "-€5.00", "-€1.10", "-€6.10", "22%", "Credit note", "Goodwill"):
        assert value in html, value
    response = customer.client.get(f"/credit-notes/{note.Number}/pdf/")
    assert response["Content-Type"] == "application/pdf"
    text = pdf_lines(response.content, tmp_path)
    for value in (note.Number, receipt.Number, SELLER_NAME, "-€5.00", "-€1.10", "-€6.10", "22%", "Credit note"):
        assert value in text, value


def test_a_credit_note_in_italian_and_another_accounts_is_404(customer, other_customer, tmp_path) -> None:
    receipt, note = refunded_with_note(customer, CASES["reverse_charge"], 1000)
    assert other_customer.client.get(f"/credit-notes/{note.Number}/").status_code == 404
    assert other_customer.client.get(f"/credit-notes/{note.Number}/pdf/").status_code == 404
    assert customer.client.get("/credit-notes/CN-2026-999999/").status_code == 404
    with translation.override("it"):
        text = pdf_lines(render_credit_note_pdf(note), tmp_path)
    assert "Nota di credito" in text and "-10,00 €" in text and "Inversione contabile" in text
    assert credit_note_of(note).reverse_charge


def test_the_credit_note_e_mail(customer) -> None:
    _, note = refunded_with_note(customer, CASES["oss"], 1200)
    mail.outbox.clear()
    assert send_credit_note(note) == ""
    [message] = mail.outbox
    assert message.to == [customer.email]
    assert note.Number in message.subject
    body = message.body
    for value in (note.Number, note.InvoiceNumber, "-€10.00", "-€2.00", "-€12.00", "20%",
                  f"/credit-notes/{note.Number}/"):
        assert value in body, value


def test_the_staff_account_page_shows_the_invoice_tax_and_its_credit_notes(customer, client) -> None:
    receipt, note = refunded_with_note(customer, CASES["reverse_charge"], 400)
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    html = client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    tax = html.split('data-testid="receipt-tax">', 1)[1].split("</small>", 1)[0]
    assert "10.00 EUR" in tax and "0%" in tax and "reverse_charge" in tax and GERMAN_VAT in tax
    assert 'data-testid="receipt-credit-note">' in html and note.Number in html and "-4.00 EUR" in html


def test_the_payment_e_mail_of_an_invoice_carries_its_fields(customer) -> None:
    case = CASES["oss"]
    receipt = invoice_receipt(customer, case)
    assert str(receipt_subject(receipt)).startswith(f"Invoice {receipt.Number}: ")
    mail.outbox.clear()
    send_customer_email("receipt", customer.email, receipt_subject(receipt), language="it", context={
        "product": receipt.ProductName, "amount": "12,00 €", "billing_date": receipt.BillingDate,
        "period_start": receipt.PeriodStart, "period_end": receipt.PeriodEnd, "card": "Visa", "charge_id": "ch_tax",
        "next_payment": receipt.PeriodEnd, "receipt_number": receipt.Number, "receipt_path": "/receipts/x/",
        "doc": invoice_of(receipt)})
    [message] = mail.outbox
    assert message.subject.startswith(f"Fattura {receipt.Number}: ")
    body = message.body.replace("\xa0", " ")
    for value in (receipt.Number, SELLER_NAME, SELLER_VAT, "Giulia Bianchi", "Imponibile: 10,00 €", "IVA: 2,00 €",
                  "20%", "Totale: 12,00 €", "La tua fattura"):
        assert value in body, value
    assert "Partita IVA" in message.alternatives[0][0]



def test_a_refund_of_an_invoice_mails_its_credit_note_in_the_refund_e_mail(moto_table) -> None:
    receipt = paid_receipt()
    assert receipt.is_invoice  # every charge is an invoice
    mail.outbox.clear()
    done = refund_receipt(receipt, 300, request_id="req-cn", actor="staff:ann", reason="late")
    [note] = access.credit_notes_of_receipt(done.receipt)
    [message] = mail.outbox  # one e-mail: the refund and its credit note
    body = message.body
    assert note.Number in body and receipt.Number in body and f"/credit-notes/{note.Number}/" in body
    assert note.Number in message.alternatives[0][0]


@pytest.mark.parametrize("language, title", [("ko", "인보이스"), ("zh-hans", "发票")])
def test_a_cjk_invoice_pdf_embeds_every_font(customer, tmp_path, language, title) -> None:
    receipt = invoice_receipt(customer, CASES["reverse_charge"])
    with translation.override(language):
        content = render_receipt_pdf(receipt, {})
    pdf = tmp_path / "invoice.pdf"
    pdf.write_bytes(content)
    if shutil.which("pdffonts") is None:
        pytest.skip("pdffonts is missing: apt-get install poppler-utils")
    listing = subprocess.run(["pdffonts", str(pdf)], capture_output=True, check=True, timeout=60).stdout.decode()
    fonts = listing.splitlines()[2:]
    assert fonts and all(line.split()[-5:-2] == ["yes", "yes", "yes"] for line in fonts), listing
    text = pdf_lines(content, tmp_path)
    assert title in text and receipt.Number in text and SELLER_VAT in text and GERMAN_VAT in text
    assert "2006/112" in text  # the reverse-charge wording, in the language's words


def test_an_italian_credit_note_never_breaks_an_amount_from_its_currency(customer, tmp_path) -> None:
    """Every amount of the figures on one line with its currency ("-14,06 USD", never
    "-14,06 US" / "D"), its column as wide as it needs."""
    case = Case(Buyer("US"), 2812, "USD", "", "0%", "", "", None)
    _, note = refunded_with_note(customer, case, 1406)
    with translation.override("it"):
        lines = pdf_lines(render_credit_note_pdf(note), tmp_path).splitlines()
    figures = [line for line in lines if "USD" in line or "US" in line]
    assert sum(line.count("-14,06 USD") for line in lines) >= 3, figures  # net, gross and the total's
    assert not any(line.rstrip().endswith(("US", "-14,06")) for line in lines), figures


@pytest.mark.parametrize("language, words", [("en", "Requested by the customer"), ("it", "Richiesto dal cliente")])
def test_a_credit_notes_reason_is_in_words_on_its_page_and_pdf(customer, tmp_path, language, words) -> None:
    receipt = invoice_receipt(customer, CASES["domestic"])
    receipt, _ = access.record_refund(receipt, refund_id="re_words", amount=100, actor="api",
                                      reason="requested_by_customer")
    [note] = access.credit_notes_of_receipt(receipt)
    customer.client.cookies["django_language"] = language
    html = customer.client.get(f"/credit-notes/{note.Number}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    text = pdf_lines(customer.client.get(f"/credit-notes/{note.Number}/pdf/", HTTP_ACCEPT_LANGUAGE=language).content,
                     tmp_path)
    for where, content in (("page", html), ("pdf", text)):
        assert words in content and "requested_by_customer" not in content, where


def test_an_invoice_pdf_shows_every_line_of_its_page(customer, tmp_path) -> None:
    """The price and the coupon's discount (and each other line the page lists under the
    document) are in the PDF too: every label of the page's list is in the PDF."""
    receipt = invoice_receipt(customer, CASES["domestic"])
    receipt.update(actions=[Receipt.CouponCode.set("SPRING"), Receipt.DiscountAmount.set(300),
                            Receipt.DisputeId.set("dp_lines"), Receipt.DisputeReason.set("fraudulent"),
                            Receipt.DisputeAmount.set(1220), Receipt.DisputeStatus.set("won"),
                            Receipt.DisputeOpenedAt.set("2026-12-05T10:00:00+00:00"),
                            Receipt.DisputeClosedAt.set("2026-12-20T10:00:00+00:00")])
    receipt, _ = access.record_refund(receipt, refund_id="re_lines", amount=100, actor="staff", reason="Goodwill")
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    text = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content, tmp_path)
    listed = html.split('<dl class="row mb-0">', 1)[1].split("</dl>", 1)[0]
    labels = [label.split("<", 1)[0] for label in listed.split('<dt class="col-sm-4">')[1:]]
    assert {"Price", "Discount (SPRING)", "Credit notes", "Dispute"} <= set(labels), labels
    for label in labels:
        if label not in ("Product", "Period", "Refunded", "Paid"):  # the document's own lines; its paid rows
            assert label in text, label
    for value in ("€15.20", "-€3.00", "€12.20", "SPRING", "-€1.00", "reason: Fraudulent",
                  "in the seller's favour"):
        assert value in text, value


def test_the_pdf_downloads_under_the_documented_names(customer, settings) -> None:
    settings.RPAY_SELLER = SELLER
    receipt, note = refunded_with_note(customer, CASES["domestic"], 100)
    response = customer.client.get(f"/receipts/{receipt.Number}/pdf/")
    assert response["Content-Disposition"] == f'attachment; filename="rpay-invoice-{receipt.Number}.pdf"'
    response = customer.client.get(f"/credit-notes/{note.Number}/pdf/")
    assert response["Content-Disposition"] == f'attachment; filename="rpay-credit-note-{note.Number}.pdf"'
    for doc in ("docs/PORTAL.md", "docs/TAX.md"):
        assert "rpay-invoice-<number>.pdf" in (settings.BASE_DIR / doc).read_text(), doc
    portal = (settings.BASE_DIR / "docs/PORTAL.md").read_text()
    assert "rpay-credit-note-<number>.pdf" in portal and "rpay-receipt-<number>.pdf" in portal
