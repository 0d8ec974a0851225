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

from django.utils.translation import get_language, pgettext
from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, StyleSheet1, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from billing.models import CreditNote, Receipt
from billing.rules.invoice import Document, DocumentKind, Party, credit_note_of, invoice_of
from billing.templatetags.invoice import party_country, vat_rate_text, with_credit_note
from billing.templatetags.portal import dispute_reason, refund_reason
from core.localformat import billing_day, local_date
from core.money import format_with_symbol

NO_BREAK_SPACE = "\xa0"
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
    "2026년 11월 30일"), its spaces no-break: a narrow cell wraps between two dates, never
    inside one ("4 December 2026 – 3" / "January 2027")."""
    return (local_date(billing_day(value), "j F Y") or "—").replace(" ", NO_BREAK_SPACE)


def _period(start: str | None, end: str | None) -> str:
    """A period as two dates, the line break (if the cell needs one) after the dash."""
    return f"{_day(start)}{NO_BREAK_SPACE}– {_day(end)}"


def _amount(amount: int, currency: str) -> str:
    """An amount with its currency, never broken across lines: every space in it
    no-break ("-14,06 USD", "CHF 1,234.56")."""
    return format_with_symbol(int(amount), currency).replace(" ", NO_BREAK_SPACE)


def pdf_filename(receipt: Receipt) -> str:
    """The download's name, as docs/PORTAL.md promises: ``rpay-invoice-<number>.pdf`` for
    an invoice, ``rpay-receipt-<number>.pdf`` for an old receipt (by its date, unnumbered)."""
    if invoice_of(receipt) is not None:
        return f"rpay-invoice-{receipt.Number or receipt.BillingDate}.pdf"
    return f"rpay-receipt-{receipt.Number or receipt.BillingDate}.pdf"


def credit_note_filename(note: CreditNote) -> str:
    return f"rpay-credit-note-{note.Number}.pdf"


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
        (_("Period"), _period(receipt.PeriodStart or receipt.BillingDate, receipt.PeriodEnd)),
        (_("Billed to"), receipt.Email or "—"),
    ]
    if receipt.BillingAddress:  # the name and address given with the card, on one line each
        rows.append((_("Billing address"), ", ".join(line.strip() for line in receipt.BillingAddress.splitlines()
                                                      if line.strip())))
    return (rows + _card_rows(receipt) + charge_rows(receipt) + _paid_rows(receipt) + _dispute_rows(receipt)
            + _reference_rows(receipt))


def charge_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """What the charge was made of, as the receipt's page lists it (receipt and invoice
    alike): a switch of product's charge less its credit; a coupon's price and discount."""

    def money(amount: int) -> str:
        return _amount(amount, receipt.Currency)

    rows = []
    if receipt.Kind == "switch" and receipt.SwitchCharge is not None:
        rows.append((_("Switch of product"), _("%(product)s for these days: %(charge)s") % {
            "product": receipt.ProductName or receipt.SKU, "charge": money(receipt.SwitchCharge)}))
        rows.append(("", _("Less %(old)s already paid for them: −%(credit)s") % {
            "old": receipt.PreviousProductName or "—", "credit": money(receipt.SwitchCredit or 0)}))
    if receipt.CouponCode:  # price, discount (code), paid
        rows.append((_("Price"), money(receipt.price_amount)))
        rows.append((_("Discount (%(code)s)") % {"code": receipt.CouponCode}, "-" + money(receipt.DiscountAmount or 0)))
    return rows


def _card_rows(receipt: Receipt) -> list[tuple[str, str]]:
    if not receipt.CardLast4:
        return []
    return [(_("Payment method"), _("%(brand)s ending in %(last4)s") % {
        "brand": receipt.CardBrand or "", "last4": receipt.CardLast4})]


def _paid_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """What was paid, each refund, what is left, and the processor's reference."""

    def money(amount: int) -> str:
        return _amount(amount, receipt.Currency)

    rows = [(_("Amount paid"), money(receipt.ProcessedAmount))]
    for refund in receipt.Refunds or []:
        rows.append((_("Refund %(date)s") % {"date": _day(refund.At)}, "-" + money(refund.Amount)))
    if receipt.RefundedAmount:
        rows.append((_("Net paid"), money(receipt.net_amount)))
    return rows


def _reference_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """The processor's reference: the last line, as on the page."""
    return [(_("Reference"), receipt.ChargeId or "—")]


def render_receipt_pdf(receipt: Receipt, seller: dict[str, Any]) -> bytes:
    """The receipt as a one-page A4 PDF: seller, number, period, card, amounts, refunds.
    A receipt with its tax figures is an invoice: drawn from them, its own seller
    snapshot rather than ``seller`` (today's settings)."""
    invoice = invoice_of(receipt)
    if invoice is not None:
        return render_document_pdf(invoice, payment_rows(receipt))
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


# --- invoices and credit notes (billing/rules/invoice.py) ---------------------------------


def document_title(document: Document) -> str:
    if document.kind == DocumentKind.CREDIT_NOTE:
        return _("Credit note %(number)s") % {"number": document.number}
    return _("Invoice %(number)s") % {"number": document.number}


def payment_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """How an invoice was paid (and refunded): below its figures, not part of them."""
    return [(_("Date paid"), _day(receipt.ProcessedDate)), *_card_rows(receipt), *charge_rows(receipt),
            *_paid_rows(receipt), *_dispute_rows(receipt), *_credit_note_rows(receipt), *_reference_rows(receipt)]


def _dispute_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """A chargeback of the payment and its outcome, in the page's words."""
    if not receipt.DisputeId:
        return []
    lines = [_("Disputed with your bank on %(day)s: %(amount)s, reason: %(reason)s.") % {
        "day": _day(receipt.DisputeOpenedAt), "amount": _amount(receipt.DisputeAmount or 0, receipt.Currency),
        "reason": dispute_reason(receipt.DisputeReason)}]
    if receipt.dispute_closed:
        day = {"day": _day(receipt.DisputeClosedAt)}
        if receipt.DisputeStatus == "won":
            lines.append(_("Closed on %(day)s in the seller's favour: the payment stands.") % day)
        elif receipt.DisputeStatus == "lost":
            lines.append(_("Closed on %(day)s: the disputed amount was returned to you by your bank.") % day)
        else:
            lines.append(_("Closed on %(day)s without a chargeback: the payment stands.") % day)
    return [(pgettext("a chargeback of the payment", "Dispute"), "\n".join(lines))]


def _credit_note_rows(receipt: Receipt) -> list[tuple[str, str]]:
    """The credit notes an invoice's refunds issued, as its page lists them."""
    notes = with_credit_note(receipt.Refunds)
    if not notes:
        return []
    return [(_("Credit notes"), "\n".join(
        f"{refund.CreditNoteNumber} -{_amount(refund.Amount, receipt.Currency)}" for refund in notes))]


def document_rows(document: Document) -> list[tuple[str, str]]:
    """The number, date, invoice corrected and currency: the label/value rows under the parties."""
    number_label = _("Credit note number") if document.kind == DocumentKind.CREDIT_NOTE else _("Invoice number")
    rows = [(number_label, document.number or "—"), (_("Date of issue"), _day(document.issued))]
    if document.corrects:
        rows.append((_("Corrects invoice"), document.corrects))
    if document.reason:
        rows.append((_("Reason"), refund_reason(document.reason)))
    rows.append((_("Currency"), document.currency))
    return rows


def document_note(document: Document) -> str | None:
    if document.reverse_charge:
        return _("Reverse charge — VAT to be accounted for by the recipient (Article 196, Directive 2006/112/EC)")
    if document.not_subject:
        return _("Not subject to EU VAT")
    return None


def _party(label: str, party: Party, fallback_name: str = "") -> list[str]:
    lines = [label, party.name or fallback_name, *party.address_lines]
    if country := party_country(party):
        lines.append(country)
    if party.vat_number:
        lines.append(_("VAT number: %(number)s") % {"number": party.vat_number})
    return lines


FIGURES_WIDTH = 170 * mm  # A4 less the margins
CELL_PADDING = 14  # points: a table cell's left and right padding (6 each, ReportLab's default) and 2 to spare
MIN_DESCRIPTION = 30 * mm


def _widest(texts: list[str], language: str | None, *, unbroken: bool) -> float:
    """The width, in points, of the widest of ``texts`` in the PDF's 10-point body font:
    whole (an amount, a date: never broken) or, ``unbroken`` False, its widest word."""
    widest = 0.0
    for text in texts:
        pieces = [text] if unbroken else text.split(" ")
        font = cjk_font(text, language) or "Helvetica"
        widest = max([widest, *(pdfmetrics.stringWidth(piece, font, 10) for piece in pieces)])
    return widest + CELL_PADDING


def figure_widths(cells: list[list[str]], language: str | None) -> list[float]:
    """The figures' column widths: each amount, rate and date column as wide as its widest
    cell (an amount never wraps: "-14,06 USD" on one line, in any language), its heading's
    words too; the description takes what is left."""
    columns = list(zip(*cells, strict=True))
    widths = [0.0] + [max(_widest(list(column[1:]), language, unbroken=True),
                          _widest([column[0]], language, unbroken=False)) for column in columns[1:]]
    # the period breaks after its dash: as wide as its wider date
    periods = [piece for text in columns[1][1:] for piece in text.split(" ")]
    widths[1] = max(_widest(periods, language, unbroken=True), _widest([columns[1][0]], language, unbroken=False))
    widths[0] = max(FIGURES_WIDTH - sum(widths[1:]), MIN_DESCRIPTION)
    return widths


def render_document_pdf(document: Document, extra_rows: list[tuple[str, str]] | None = None) -> bytes:
    """An invoice or a credit note as an A4 PDF: the Article 226 fields (seller and
    customer with their VAT numbers, number, date, each line with its period, net, rate,
    VAT and gross, the totals per rate, the currency, the reverse-charge or "not subject"
    wording), then ``extra_rows`` (how it was paid)."""
    styles: StyleSheet1 = getSampleStyleSheet()
    language = get_language()
    font = cjk_font("", language) or "Helvetica"
    bold = CJK_FONT if font == CJK_FONT else "Helvetica-Bold"
    buffer = io.BytesIO()
    title = document_title(document)
    template = SimpleDocTemplate(
        buffer, pagesize=A4, leftMargin=20 * mm, rightMargin=20 * mm, topMargin=20 * mm, bottomMargin=20 * mm,
        initialFontName=CJK_FONT if is_cjk_language(language) else "Helvetica", title=title,
        author=document.seller.name,
    )

    def para(text: str, style: str = "Normal") -> Paragraph:
        return _paragraph(escape(text), styles[style], language)

    def money(amount: int) -> str:
        return _amount(amount, document.currency)

    seller = _party(_("Seller"), document.seller)
    buyer = _party(_("Customer"), document.buyer, document.email)
    story: list[Flowable] = [para(title, "Title")]
    parties = Table([[[para(line) for line in seller], [para(line) for line in buyer]]], colWidths=[85 * mm, 85 * mm])
    parties.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("FONTNAME", (0, 0), (-1, -1), font)]))
    story += [parties, Spacer(1, 6 * mm)]

    def rows_table(rows: list[tuple[str, str]]) -> Table:
        table = Table([[para(label), _paragraph(_lines(value), styles["Normal"], language)] for label, value in rows],
                      colWidths=[50 * mm, 120 * mm])
        table.setStyle(TableStyle([
            ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.lightgrey), ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("FONTNAME", (0, 0), (-1, -1), font)]))
        return table

    story += [rows_table(document_rows(document)), Spacer(1, 6 * mm)]
    header = [_("Description"), _("Period"), _("Net"), _("VAT rate"), _("VAT"), _("Gross")]
    cells: list[list[str]] = [header]
    for line in document.lines:
        period = _period(line.period_start, line.period_end) if line.period_end else ""
        cells.append([line.description or "—", period, money(line.net), vat_rate_text(line.rate), money(line.tax),
                      money(line.gross)])
    heading = len(cells)  # "Totals per VAT rate", across the table
    for total in document.totals:
        cells.append([_("Taxable amount"), "", money(total.net), vat_rate_text(total.rate), money(total.tax),
                      money(total.gross)])
    cells.append([_("Total"), document.currency, money(document.net), "", money(document.tax),
                  money(document.gross)])
    lines: list[list[Any]] = [[para(text) if text else "" for text in row] for row in cells]
    lines.insert(heading, [para(_("Totals per VAT rate"), "Heading5"), "", "", "", "", ""])
    figures = Table(lines, colWidths=figure_widths(cells, language), repeatRows=1)
    figures.setStyle(TableStyle([
        ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.grey), ("LINEBELOW", (0, 1), (-1, -1), 0.25, colors.lightgrey),
        ("LINEABOVE", (0, -1), (-1, -1), 0.5, colors.grey), ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("SPAN", (0, heading), (-1, heading)),
        ("FONTNAME", (0, 0), (-1, -1), font), ("FONTNAME", (0, -1), (-1, -1), bold)]))
    story.append(figures)
    note = document_note(document)
    if note:
        story += [Spacer(1, 4 * mm), para(note, "Heading4")]
    if extra_rows:
        story += [Spacer(1, 6 * mm), rows_table(extra_rows)]
    template.build(story)
    return buffer.getvalue()


def render_credit_note_pdf(note: CreditNote) -> bytes:
    return render_document_pdf(credit_note_of(note))
