"""A receipt PDF in Korean or Chinese shows its CJK text (ReportLab's CID
fonts), not missing glyphs: the translated labels, the product's name and the seller's."""

from __future__ import annotations

import pytest
from django.utils import translation

from billing import access
from billing.views.receipt_pdf import CHINESE_FONT, KOREAN_FONT, cjk_font, render_receipt_pdf
from core.pages import today
from tests.billing.test_portal_receipt_pages import pdf_text
from tests.builders import subscribe

pytestmark = pytest.mark.django_db

CASES = {
    # language: (product name, seller, a translated label, the date's marker, the font)
    "ko": ("일간 뉴스", "에이스 빌링", "영수증 번호", "년", KOREAN_FONT),
    "zh-hans": ("每日新闻", "艾克米账单", "收据编号", "年", CHINESE_FONT),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_cjk_receipt_pdf_extracts_its_cjk_text(customer, language) -> None:
    name, seller, label, year, font = CASES[language]
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=9900, currency="KRW", charge_id="ch_cjk",
                                       retention_days=200, period_end=today())
    receipt.ProductName = name
    with translation.override(language):
        content = render_receipt_pdf(receipt, {"name": seller, "address": "Seoul 04524", "tax_id": "KR-1"})
    text = pdf_text(content)
    assert name in text and seller in text and label in text
    assert year in text  # the dates are the language's ("2026년 11월 23일", "2026年11月23日")
    assert receipt.Number in text and "ch_cjk" in text
    assert f"/{font}".encode() in content  # the CID font is named in the PDF, not only Helvetica


def test_the_font_follows_the_script_then_the_language() -> None:
    assert cjk_font("Acme GmbH – 9,99 €") is None  # Windows-1252: Helvetica has it
    assert cjk_font("일간 뉴스", "it") == KOREAN_FONT
    assert cjk_font("每日新闻", "ko") == CHINESE_FONT
    assert cjk_font("₩9,900", "ko") == KOREAN_FONT
    assert cjk_font("¥9,900 ₩", "zh-hans") == CHINESE_FONT


def test_an_english_receipt_with_a_korean_product_name_still_shows_it(customer) -> None:
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_en",
                                       retention_days=200, period_end=today())
    receipt.ProductName = "일간 뉴스"
    with translation.override("en"):
        text = pdf_text(render_receipt_pdf(receipt, {"name": "Acme", "address": "Berlin"}))
    assert "일간 뉴스" in text and "Receipt number" in text and "$9.99" in text
