"""A receipt PDF in Korean or Chinese carries its fonts: every font is embedded (pdffonts
says "emb yes"), the text extracted (pdftotext) is the receipt's text, Hangul, Chinese and
the won sign included, and page 1 renders the same on a machine without any font
(pdftoppm under an empty fontconfig) as with the system's (CI has fonts-noto-cjk: were the
fonts only named, the two would differ). An English receipt shows a Korean product name in
the embedded font. Poppler's tools: Debian's poppler-utils (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.utils import translation
from PIL import Image

from billing import access
from billing.views.receipt_pdf import CJK_FONT, cjk_font, receipt_rows, render_receipt_pdf
from core.pages import today
from tests.billing.test_portal_receipt_pages import pdf_text
from tests.builders import subscribe

pytestmark = pytest.mark.django_db

CASES = {
    # language: (product name, seller, a translated label, the date's marker)
    "ko": ("일간 뉴스", "에이스 빌링", "영수증 번호", "년"),
    "zh-hans": ("每日新闻", "艾克米账单", "收据编号", "年"),
}
SELLER_ADDRESS = "Seoul 04524\n강남구 테헤란로 1"


def poppler(tool: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    if shutil.which(tool) is None:
        # As the .po check does without gettext: CI must have it; elsewhere say what is missing.
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is missing: apt-get install poppler-utils (.ci/run does)")
        pytest.skip(f"{tool} is missing: apt-get install poppler-utils")
    return subprocess.run([tool, *args], capture_output=True, check=True, timeout=60, env=env)


def no_fonts_env(tmp_path: Path) -> dict[str, str]:
    """A fontconfig that knows no font at all: a machine without CJK (or any) fonts."""
    config = tmp_path / "fonts.conf"
    config.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
                      f"<fontconfig><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>\n")
    return {**os.environ, "FONTCONFIG_FILE": str(config), "FONTCONFIG_PATH": str(tmp_path)}


def cjk_receipt(customer, language: str):
    name, seller, _, _ = CASES[language]
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=9900, currency="KRW", charge_id="ch_cjk",
                                       retention_days=200, period_end=today())
    receipt.ProductName = name
    receipt.Net = None  # the receipt's own layout (an old, tax-blind one): an invoice's is in test_tax_documents
    with translation.override(language):
        content = render_receipt_pdf(receipt, {"name": seller, "address": SELLER_ADDRESS, "tax_id": "KR-1"})
        rows = receipt_rows(receipt)
    return receipt, rows, content


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_cjk_receipt_pdf_embeds_its_fonts_and_its_text_is_the_receipts(customer, language, tmp_path) -> None:
    name, seller, label, year = CASES[language]
    receipt, rows, content = cjk_receipt(customer, language)
    pdf = tmp_path / "receipt.pdf"
    pdf.write_bytes(content)

    # every font embedded (a subset of the CJK face), none only named
    listing = poppler("pdffonts", str(pdf)).stdout.decode().splitlines()[2:]
    assert listing, "no font in the PDF"
    for line in listing:
        name_, *_, emb, sub, uni, _obj, _gen = line.split()
        assert (emb, sub, uni) == ("yes", "yes", "yes"), line
        assert name_.endswith(CJK_FONT + "-0"), line

    # the extracted text is the receipt's, line for line (each row's label then its value)
    with translation.override(language):
        heading = str(rows[0][1])
    expected = [seller, *SELLER_ADDRESS.splitlines(), "KR-1", heading,
                *(f"{label_} {value}" for label_, value in rows)]
    extracted = [line for line in poppler("pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-", env=no_fonts_env(
        tmp_path)).stdout.decode().splitlines() if line.strip()]
    assert len(extracted) == len(expected), extracted
    for got, want in zip(extracted, expected, strict=True):
        # a date's no-break spaces (receipt_pdf keeps it on one line) may come out as plain ones
        assert want.replace("\xa0", " ") in got.replace("\xa0", " "), (got, want)
    text = "\n".join(extracted)
    assert name in text and label in text and year in text and "₩9,900" in text and receipt.Number in text
    assert pdf_text(content).count(receipt.Number) == 2  # pypdf reads it too: heading and row

    # page 1 renders without a single font on the machine, as it does with the system's
    bare = poppler("pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "bare"),
                   env=no_fonts_env(tmp_path))
    assert b"font" not in bare.stderr.lower(), bare.stderr
    poppler("pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "system"))
    [bare_png] = tmp_path.glob("bare*.png")
    [system_png] = tmp_path.glob("system*.png")
    with Image.open(bare_png) as image, Image.open(system_png) as reference:
        assert image.tobytes() == reference.tobytes()  # the system's fonts play no part
        dark = sum(image.convert("L").histogram()[:128])  # pixels darker than mid-grey
    assert dark > 2000, "page 1 is blank: the glyphs were not drawn"


def test_the_font_follows_the_language_then_the_script() -> None:
    assert cjk_font("Acme GmbH – 9,99 €") is None  # Windows-1252: Helvetica has it
    assert cjk_font("Acme GmbH", "ko") == CJK_FONT  # a Korean receipt: every paragraph embedded
    assert cjk_font("Acme GmbH", "zh-hans") == CJK_FONT
    assert cjk_font("일간 뉴스", "it") == CJK_FONT
    assert cjk_font("每日新闻", "en") == CJK_FONT
    assert cjk_font("₩9,900", "en") == CJK_FONT


def test_an_english_receipt_with_a_korean_product_name_still_shows_it(customer, tmp_path) -> None:
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_en",
                                       retention_days=200, period_end=today())
    receipt.ProductName = "일간 뉴스"
    receipt.Net = None  # the receipt's own layout (an old, tax-blind one)
    with translation.override("en"):
        content = render_receipt_pdf(receipt, {"name": "Acme", "address": "Berlin"})
    text = pdf_text(content)
    assert "일간 뉴스" in text and "Receipt number" in text and "$9.99" in text
    pdf = tmp_path / "receipt.pdf"
    pdf.write_bytes(content)
    fonts = poppler("pdffonts", str(pdf)).stdout.decode()
    assert f"+{CJK_FONT}" in fonts  # the Korean name's font is embedded (Helvetica, a standard font, is not)
