"""An invoice and its credit note in a real Chromium on a 390 px phone: the demo's
Italian consumer opens her refunded invoice from the receipts list, downloads its PDF,
follows the link to its credit note. Screenshots: artifacts/screenshots/invoice-*.png."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from billing.management.demo_tax import DEMO_BUSINESS, REFUNDED_CUSTOMER
from tests.billing.test_browser_portal import log_in, no_horizontal_scroll
from tests.billing.test_browser_receipts import NUMBER_URL
from tests.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_invoice_and_its_credit_note_on_a_phone(phone_page, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=StringIO())
    page = phone_page
    log_in(page, REFUNDED_CUSTOMER, "customer-demo-2026")
    page.goto("/receipts/")
    assert no_horizontal_scroll(page)
    page.locator("[data-testid=receipt-month] a").first.click()  # the newest: the refunded one
    page.wait_for_url(NUMBER_URL)
    number = NUMBER_URL.search(page.url).group(1)
    assert page.get_by_test_id("document-title").inner_text().startswith("Invoice")
    assert DEMO_BUSINESS.tax.vat_number in page.get_by_test_id("seller").inner_text()
    assert "22%" in page.get_by_test_id("document-lines").inner_text()
    assert no_horizontal_scroll(page)
    screenshot(page, "invoice-phone")
    with page.expect_download() as info:
        page.get_by_test_id("receipt-pdf").click()
    download = info.value
    assert download.suggested_filename == f"rpay-invoice-{number}.pdf"  # docs/PORTAL.md's name
    text = "\n".join(p.extract_text() for p in PdfReader(download.path()).pages)
    assert number in text and DEMO_BUSINESS.tax.vat_number in text and Path(download.path()).stat().st_size > 1000

    page.get_by_test_id("credit-notes").locator("a").first.click()
    page.wait_for_url("**/credit-notes/CN-*/")
    assert page.get_by_test_id("document-title").inner_text().startswith("Credit note")
    assert number in page.get_by_test_id("document-corrects").inner_text()
    assert "-" in page.get_by_test_id("document-gross").inner_text()
    assert no_horizontal_scroll(page)
    screenshot(page, "credit-note-phone")
