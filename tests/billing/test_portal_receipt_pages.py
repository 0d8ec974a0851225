"""The receipt pages: by number, with the seller, the period, the card, the
refunds and the net amount; the PDF; failed attempts in the payment history; receipts
written before numbers existed still shown."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from pypdf import PdfReader

from billing import access
from billing.models import Receipt, ReceiptNumberLookup
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.pages import today
from tests.builders import DECLINED_NUMBER, TEST_CARD, card, subscribe

pytestmark = pytest.mark.django_db

SELLER = {"name": "Acme Billing GmbH", "address": "Hauptstrasse 1\n10115 Berlin\nGermany", "tax_id": "DE123456789"}


@pytest.fixture
def seller(settings):
    settings.RPAY_SELLER = SELLER
    return SELLER


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_the_receipt_page_shows_number_seller_period_card_refunds_and_net(customer, seller, ddb_requests) -> None:
    sub = subscribe(customer)
    start = today()
    end = start.replace(day=min(start.day, 28))  # any later day: the page shows what is stored
    receipt, _ = access.create_receipt(sub, billing_date=start, amount=999, currency="USD", charge_id="ch_9",
                                       retention_days=200, period_end=end)
    receipt, _ = access.record_refund(receipt, refund_id="re_a", amount=300, actor="staff")
    receipt, _ = access.record_refund(receipt, refund_id="re_b", amount=200, actor="staff")
    ddb_requests.reset()
    response = customer.client.get(f"/receipts/{receipt.Number}/")
    assert ddb_requests.ops == ["GetItem", "GetItem"]  # the number's look-up item, then the receipt
    html = response.content.decode()
    assert f'data-testid="receipt-number">{receipt.Number}<' in html
    assert "Acme Billing GmbH" in html and "10115 Berlin" in html and 'data-testid="seller-tax-id">DE123456789<' in html
    assert f"{start.day} {start:%B %Y} – {end.day} {end:%B %Y}" in html
    assert "Visa ending in 4242" in html
    assert "re_a" in html and "re_b" in html and "$3.00" in html and "$2.00" in html
    assert 'data-testid="net">$4.99<' in html
    assert f'href="/receipts/{receipt.Number}/pdf/"' in html
    # the old link by key moves to the number
    old = customer.client.get(reverse("receipt", args=[receipt.SK]))
    assert old.status_code == 301 and old["Location"] == f"/receipts/{receipt.Number}/"


def test_the_pdf_is_a_pdf_with_the_number_amount_and_seller(customer, seller, ddb_requests) -> None:
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=1234, currency="EUR", charge_id="ch_p",
                                       retention_days=200, period_end=today())
    access.record_refund(receipt, refund_id="re_p", amount=234, actor="staff")
    ddb_requests.reset()
    response = customer.client.get(f"/receipts/{receipt.Number}/pdf/")
    assert ddb_requests.ops == ["GetItem", "GetItem"]
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert f'filename="rpay-invoice-{receipt.Number}.pdf"' in response["Content-Disposition"]  # docs/PORTAL.md's name
    assert response.content.startswith(b"%PDF-")
    text = pdf_text(response.content)
    assert receipt.Number in text
    assert "€12.34" in text and "€10.00" in text  # paid, and net of the refund
    assert "Acme Billing GmbH" in text and "DE123456789" in text and "Berlin" in text
    assert "Visa ending in 4242" in text and "4242424242424242" not in text


def test_receipts_of_another_account_and_malformed_numbers_are_404(customer, other_customer) -> None:
    sub = subscribe(other_customer)
    theirs, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_o",
                                      retention_days=200)
    for path in (f"/receipts/{theirs.Number}/", f"/receipts/{theirs.Number}/pdf/", reverse("receipt", args=[theirs.SK]),
                 "/receipts/R-2026-99/", "/receipts/R-2026-000001%23x/", "/receipts/" + "R" * 3000 + "/",
                 "/receipts/R-2026-999999/pdf/"):
        assert customer.client.get(path).status_code == 404, path
    assert other_customer.client.get(f"/receipts/{theirs.Number}/").status_code == 200


def test_a_receipt_written_before_numbers_is_still_shown_by_key(customer, seller, ddb_requests) -> None:
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_old",
                                       retention_days=200)
    ReceiptNumberLookup(ReceiptNumberLookup.pk(number=receipt.Number), ReceiptNumberLookup.sk(number=receipt.Number)).delete()
    receipt.update(actions=[Receipt.Number.remove()])
    listing = customer.client.get("/receipts/").content.decode()
    path = reverse("receipt", args=[receipt.SK])
    assert f'href="{path}"' in listing
    ddb_requests.reset()
    page = customer.client.get(path)
    assert ddb_requests.ops == ["GetItem"] and page.status_code == 200
    assert "ch_old" in page.content.decode() and "Acme Billing GmbH" in page.content.decode()
    pdf = customer.client.get(reverse("receipt_pdf", args=[receipt.SK]))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-") and "ch_old" in pdf_text(pdf.content)


def _declined_subscription(customer, *, sku: str = "CLOUD-200"):
    account = access.get_account(customer.account_id)
    token = card(DECLINED_NUMBER)
    return access.create_subscription(
        account, sku=sku, payment_day=15, amount=500, currency="USD", card=token, today=today(),
        reminder_days_before=7, product_name="Cloud storage")


def test_failed_attempts_are_in_the_history_at_no_extra_request(customer, ddb_requests) -> None:
    paid = subscribe(customer)
    receipt, _ = access.create_receipt(paid, billing_date=today(), amount=999, currency="USD", charge_id="ch_ok",
                                       retention_days=200)
    declined = _declined_subscription(customer)
    outcome = payments.take_payment(declined, run_date=today())
    assert outcome.status == PaymentStatus.DECLINED
    ended = _declined_subscription(customer, sku="MUSIC-FAMILY")
    assert payments.take_first_payment(ended, today=today()).status == PaymentStatus.CANCELLED

    ddb_requests.reset()
    html = customer.client.get("/receipts/").content.decode()
    assert ddb_requests.ops == ["Query"]  # receipts and failed attempts: one Query
    assert html.count('data-testid="failed-attempt"') == 2
    # the decline in words, not the processor's code
    # a first payment declined: the subscription never started (not "ended")
    assert "card declined" in html and "Declined, subscription not started" in html and "Cloud storage" in html
    assert f"${outcome.amount // 100}.{outcome.amount % 100:02d}" in html  # the amount tried
    assert receipt.Number in html

    # the subscription page: its own history only (the subscription's Query by id, then
    # the history's Query; the seller's tax profile, for the coming amounts)
    ddb_requests.reset()
    page = customer.client.get(reverse("subscription", args=[declined.sub_id])).content.decode()
    assert ddb_requests.ops == ["Query", "Query", "GetItem"]
    assert page.count('data-testid="failed-attempt"') == 1 and receipt.Number not in page
    page = customer.client.get(reverse("subscription", args=[paid.sub_id])).content.decode()
    assert 'data-testid="failed-attempt"' not in page and receipt.Number in page


def test_the_receipt_and_its_pdf_show_the_billing_name_and_address_given(customer, seller) -> None:
    account = access.get_account(customer.account_id)
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD", card=TEST_CARD, today=today(),
        reminder_days_before=7, product_name="News", billing_address="Ann Example\n1 Main Street\n12345 Springfield")
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_a",
                                       retention_days=200, period_end=today())
    assert receipt.BillingAddress == "Ann Example\n1 Main Street\n12345 Springfield"
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    shown = html.split('data-testid="billing-address">')[1].split("</div>")[0]
    assert shown == "Ann Example\n1 Main Street\n12345 Springfield"
    text = pdf_text(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content)
    # an invoice's customer block: the name, then the address, a line each
    assert "Ann Example\n1 Main Street\n12345 Springfield" in text
