"""Receipts in a real Chromium: open one by its number, download its PDF, on a
desktop and on a 390 px phone. Screenshots go to artifacts/screenshots/receipt-*.png."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from tests.billing.test_browser_portal import log_in, no_horizontal_scroll
from tests.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NUMBER_URL = re.compile(r"/receipts/(R-[0-9]{4}-(?:S[0-9]{2}-)?[0-9]{6,9})/$")


def open_and_download(page, name: str) -> tuple[str, str]:
    """From the receipts list, open the newest receipt by its number and download its
    PDF; returns (number, the PDF's text)."""
    page.goto("/receipts/")
    page.locator("[data-testid=receipt-month] a").first.click()
    page.wait_for_url(NUMBER_URL)
    number = NUMBER_URL.search(page.url).group(1)
    assert page.get_by_test_id("receipt-number").inner_text() == number
    assert "rpay Ltd" in page.get_by_test_id("seller").inner_text()
    screenshot(page, f"receipt-{name}")
    with page.expect_download() as info:
        page.get_by_test_id("receipt-pdf").click()
    download = info.value
    assert download.suggested_filename == f"rpay-invoice-{number}.pdf"  # docs/PORTAL.md's name
    content = Path(download.path()).read_bytes()
    assert content.startswith(b"%PDF-")
    return number, "\n".join(p.extract_text() for p in PdfReader(download.path()).pages)


def test_a_receipt_by_number_and_its_pdf_on_desktop_and_phone(page, phone_page, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=StringIO())

    log_in(page, "customer@rpay.localhost", "customer-demo-2026")
    number, text = open_and_download(page, "desktop")
    amount = page.get_by_test_id("receipt-amount").inner_text()
    assert number in text and amount in text and "rpay Ltd" in text

    log_in(phone_page, "customer@rpay.localhost", "customer-demo-2026")
    phone_number, phone_text = open_and_download(phone_page, "phone")
    assert phone_number == number and number in phone_text
    assert no_horizontal_scroll(phone_page)
    phone_page.goto("/receipts/")
    assert no_horizontal_scroll(phone_page)
