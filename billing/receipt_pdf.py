"""A receipt as a PDF, drawn with ReportLab's platypus (paragraphs and a table).

Why ReportLab: it is maintained (by ReportLab Inc., releases every few months), a
wheel with no system libraries (WeasyPrint needs Pango and its fonts from the system,
which neither ``make install`` nor ``.ci/run`` brings), and xhtml2pdf is itself a layer
over ReportLab with a dozen more dependencies and a CSS subset: drawing the few lines of
a receipt directly is simpler and keeps one library. The standard PDF fonts cover
Latin-1 and the euro sign; text outside them (a product name in another script) shows
as missing glyphs, never as an error.
"""

from __future__ import annotations

import io
from datetime import date, datetime
from typing import Any
from xml.sax.saxutils import escape

from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from billing.models import Receipt
from billing.money import format_with_symbol


def _day(value: str | None) -> str:
    if not value:
        return "—"
    parsed = datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
    return f"{parsed.day} {parsed:%B %Y}"


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
    if receipt.CardLast4:
        rows.append((_("Payment method"), _("%(brand)s ending in %(last4)s") % {
            "brand": receipt.CardBrand or "", "last4": receipt.CardLast4}))
    rows.append((_("Amount paid"), money(receipt.ProcessedAmount)))
    for refund in receipt.Refunds or []:
        rows.append((_("Refund %(date)s") % {"date": _day(refund.At)}, "-" + money(refund.Amount)))
    if receipt.RefundedAmount:
        rows.append((_("Net paid"), money(receipt.net_amount)))
    rows.append((_("Reference"), receipt.ChargeId or "—"))
    return rows


def render_receipt_pdf(receipt: Receipt, seller: dict[str, Any]) -> bytes:
    """The receipt as a one-page A4 PDF: seller, number, period, card, amounts, refunds."""
    styles = getSampleStyleSheet()
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer, pagesize=A4, leftMargin=20 * mm, rightMargin=20 * mm, topMargin=20 * mm, bottomMargin=20 * mm,
        title=_("Receipt %(number)s") % {"number": receipt.Number or receipt.BillingDate},
        author=seller.get("name", ""),
    )
    story: list[Flowable] = [
        Paragraph(escape(seller.get("name", "")), styles["Title"]),
        Paragraph(_lines(seller.get("address", "")), styles["Normal"]),
    ]
    if seller.get("tax_id"):
        story.append(Paragraph(escape(_("Tax id: %(tax_id)s") % {"tax_id": seller["tax_id"]}), styles["Normal"]))
    story += [
        Spacer(1, 8 * mm),
        Paragraph(escape(_("Receipt %(number)s") % {"number": receipt.Number or ""}), styles["Heading2"]),
    ]
    table = Table([[Paragraph(escape(label), styles["Normal"]), Paragraph(escape(value), styles["Normal"])]
                   for label, value in receipt_rows(receipt)], colWidths=[50 * mm, 120 * mm])
    table.setStyle(TableStyle([
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.lightgrey),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]))
    story.append(table)
    document.build(story)
    return buffer.getvalue()
