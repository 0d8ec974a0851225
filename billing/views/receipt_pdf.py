"""A receipt as a PDF, drawn with ReportLab's platypus (paragraphs and a table).

Why ReportLab: it is maintained (by ReportLab Inc., releases every few months), a
wheel with no system libraries (WeasyPrint needs Pango and its fonts from the system,
which neither ``make install`` nor ``.ci/run`` brings), and xhtml2pdf is itself a layer
over ReportLab with a dozen more dependencies and a CSS subset: drawing the few lines of
a receipt directly is simpler and keeps one library.

Fonts: the standard PDF fonts (Helvetica) cover Windows-1252 only, so a Korean or
Chinese label, product name, customer name or seller line needs a CJK font. ReportLab's
built-in CID fonts are only named in the PDF, not embedded (a viewer without CJK fonts
shows boxes), so the receipt embeds a subset of a TrueType font shipped as a Python
package (``paperang-p2-fonts-cjk``: WenQuanYi Micro Hei, Apache 2.0; one face for Hangul,
Chinese and Latin; TrueType outlines, which ReportLab's TTFont embeds, unlike the CFF
``.otf`` of Noto CJK). A Korean or Chinese receipt is set in it throughout, so every font
of its PDF is embedded; another language's receipt uses it only for the paragraphs
Helvetica cannot show (a Korean product name on an English receipt).
"""

from __future__ import annotations

import importlib.resources
import io
from typing import Any
from xml.sax.saxutils import escape

from django.utils.translation import get_language
from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, StyleSheet1, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from billing.models import Receipt
from core.localformat import local_date
from core.money import format_with_symbol

CJK_FONT = "WenQuanYiMicroHei"  # Hangul, Chinese, Latin: embedded (a subset) in each PDF
CJK_LANGUAGES = ("ko", "zh")  # receipts set in CJK_FONT throughout
WON_SIGN, FULLWIDTH_WON_SIGN = 0x20A9, 0xFFE6


def _register_cjk_font() -> None:
    path = importlib.resources.files("paperang_p2_fonts_cjk") / "fonts" / "wqy-microhei.ttc"
    font = TTFont(CJK_FONT, str(path), subfontIndex=0)
    # The face has no won sign (₩), only its fullwidth form: drawn with that glyph, and
    # still extracted (copied, searched) as ₩, the character the subset's map gives it.
    glyphs = font.face.charToGlyph
    glyphs.setdefault(WON_SIGN, glyphs[FULLWIDTH_WON_SIGN])
    pdfmetrics.registerFont(font)


_register_cjk_font()


def is_cjk_language(language: str | None) -> bool:
    return (language or "").lower().startswith(CJK_LANGUAGES)


def cjk_font(text: str, language: str | None = None) -> str | None:
    """The embedded CJK font, or None when Helvetica will do: in a Korean or Chinese
    receipt always (every font of its PDF embedded), in another only for text beyond
    Windows-1252 (the standard fonts' encoding, which has the euro sign and the dashes)."""
    if is_cjk_language(language):
        return CJK_FONT
    try:
        text.encode("cp1252")
        return None
    except UnicodeEncodeError:
        return CJK_FONT


def _paragraph(text: str, style: ParagraphStyle, language: str | None) -> Paragraph:
    """A paragraph of escaped markup ``text``, in the CJK font when the receipt's language
    or the text's script needs it (CJK word wrap too: Chinese has no spaces to break at)."""
    font = cjk_font(text, language)
    if font is not None:
        style = ParagraphStyle(f"{style.name}-{font}", parent=style, fontName=font, wordWrap="CJK")
    return Paragraph(text, style)


def _day(value: str | None) -> str:
    """A stored ISO date (or timestamp) in the receipt's language ("30 November 2026",
    "2026년 11월 30일")."""
    return local_date(value, "j F Y") or "—"


def _lines(text: str) -> str:
    """Escaped text with its line breaks kept (ReportLab paragraphs take a little markup)."""
    return "<br/>".join(escape(line) for line in str(text).splitlines())


def receipt_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """The label/value rows the PDF shows, in order."""

    def money(amount: int) -> str:
        return format_with_symbol(int(amount), receipt.Currency)

    rows = [
        (_("Receipt number"), receipt.Number or "—"),
        (_("Date paid"), _day(receipt.ProcessedDate)),
        (_("Product"), f"{receipt.ProductName or receipt.SKU} ({receipt.SKU})"),
        (_("Period"), f"{_day(receipt.PeriodStart or receipt.BillingDate)} – {_day(receipt.PeriodEnd)}"),
        (_("Billed to"), receipt.Email or "—"),
    ]
    if receipt.BillingAddress:  # the name and address given with the card, on one line each
        rows.append((_("Billing address"), ", ".join(line.strip() for line in receipt.BillingAddress.splitlines()
                                                      if line.strip())))
    if receipt.CardLast4:
        rows.append((_("Payment method"), _("%(brand)s ending in %(last4)s") % {
            "brand": receipt.CardBrand or "", "last4": receipt.CardLast4}))
    if receipt.CouponCode:  # price, discount (code), paid
        rows.append((_("Price"), money(receipt.price_amount)))
        rows.append((_("Discount (%(code)s)") % {"code": receipt.CouponCode}, "-" + money(receipt.DiscountAmount or 0)))
    rows.append((_("Amount paid"), money(receipt.ProcessedAmount)))
    for refund in receipt.Refunds or []:
        rows.append((_("Refund %(date)s") % {"date": _day(refund.At)}, "-" + money(refund.Amount)))
    if receipt.RefundedAmount:
        rows.append((_("Net paid"), money(receipt.net_amount)))
    rows.append((_("Reference"), receipt.ChargeId or "—"))
    return rows


def render_receipt_pdf(receipt: Receipt, seller: dict[str, Any]) -> bytes:
    """The receipt as a one-page A4 PDF: seller, number, period, card, amounts, refunds."""
    styles: StyleSheet1 = getSampleStyleSheet()
    language = get_language()
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer, pagesize=A4, leftMargin=20 * mm, rightMargin=20 * mm, topMargin=20 * mm, bottomMargin=20 * mm,
        # the page's own font (else Helvetica, named but not embedded, even when unused)
        initialFontName=CJK_FONT if is_cjk_language(language) else "Helvetica",
        title=_("Receipt %(number)s") % {"number": receipt.Number or receipt.BillingDate},
        author=seller.get("name", ""),
    )
    story: list[Flowable] = [
        _paragraph(escape(seller.get("name", "")), styles["Title"], language),
        _paragraph(_lines(seller.get("address", "")), styles["Normal"], language),
    ]
    if seller.get("tax_id"):
        story.append(_paragraph(escape(_("Tax id: %(tax_id)s") % {"tax_id": seller["tax_id"]}), styles["Normal"],
                                language))
    story += [
        Spacer(1, 8 * mm),
        _paragraph(escape(_("Receipt %(number)s") % {"number": receipt.Number or ""}), styles["Heading2"], language),
    ]
    table = Table([[_paragraph(escape(label), styles["Normal"], language),
                    _paragraph(escape(value), styles["Normal"], language)]
                   for label, value in receipt_rows(receipt)], colWidths=[50 * mm, 120 * mm])
    table.setStyle(TableStyle([
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.lightgrey),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        # the cells' own font (Helvetica by default) is named in the PDF too: the CJK one
        ("FONTNAME", (0, 0), (-1, -1), cjk_font("", language) or "Helvetica"),
    ]))
    story.append(table)
    document.build(story)
    return buffer.getvalue()
