"""An invoice or a credit note as a document: the fields Article 226 of the VAT Directive
(2006/112/EC) asks for, read from what the payment run (or the refund) stored on the
receipt (or the credit note). Pure: the page, the PDF and the e-mail all draw this one
shape, so the three cannot disagree.

Everything comes from the stored item, the seller included (its ``Seller`` snapshot):
an invoice is never edited, so today's settings never reach an old invoice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext as _

from billing.models import CreditNote, Receipt, TaxLineMap
from billing.rules.price_words import part_words
from billing.rules.pricing import UsagePart
from billing.rules.seat_lines import LineSeats, line_seats_words, stored_seats
from billing.rules.tax import REVERSE_CHARGE_NOTE, Treatment


class DocumentKind:
    INVOICE = "invoice"
    CREDIT_NOTE = "credit_note"


@dataclass(frozen=True)
class Party:
    name: str
    address: str = ""
    country: str = ""
    vat_number: str = ""

    @property
    def address_lines(self) -> list[str]:
        return [line.strip() for line in self.address.splitlines() if line.strip()]

    @property
    def full_address(self) -> str:
        """The name, then the address, one line each (as the customer gave them)."""
        return "\n".join(line for line in (self.name, *self.address_lines) if line)


@dataclass(frozen=True)
class UsageTier:
    """A usage line's tier as stored (billing/access/receipts.py): worded when shown."""

    meter: str
    part: UsagePart
    currency: str
    unit_label: str | None = None


@dataclass(frozen=True)
class Line:
    text: str  # the stored description
    period_start: str | None
    period_end: str | None
    net: int  # minor units of the document's currency (negative on a credit note)
    rate: str  # percent as stored: "22", "25.5", "0"
    tax: int
    gross: int
    tier: UsageTier | None = None
    seats: LineSeats | None = None  # a fixed fee of several seats (billing/rules/seat_lines.py)
    currency: str = ""  # the document's, to word a seat's price

    @property
    def description(self) -> str:
        """The stored description, or a usage tier's words in the active language when it
        is read ("api_calls: 235 calls × $0.002"), or a fixed fee of several seats with
        them ("Team: $20.00 a seat × 5"): a page, the PDF and the e-mail are each worded in
        their reader's language, whenever the document was made."""
        if self.tier is not None:
            return usage_tier_words(self.tier)
        if self.seats is not None:
            return _("%(description)s: %(seats)s") % {"description": self.text,
                                                      "seats": line_seats_words(self.seats, self.currency)}
        return self.text


def usage_tier_words(tier: UsageTier) -> str:
    return _("%(meter)s: %(tier)s") % {"meter": tier.meter,
                                        "tier": part_words(tier.part, tier.currency, tier.unit_label)}


def usage_tier(line: TaxLineMap, currency: str) -> UsageTier | None:
    """A stored usage line's tier, None for any other line (an old receipt's one usage
    line included: its stored description stands)."""
    if line.UsageUnits is None or line.UnitAmount is None:
        return None
    part = UsagePart(int(line.UsageUnits), Decimal(line.UnitAmount), int(line.FlatAmount or 0),
                     int(line.Gross), int(line.PackageSize) if line.PackageSize else None)
    return UsageTier(line.Description or "", part, currency, line.UnitLabel or None)


@dataclass(frozen=True)
class RateTotal:
    rate: str
    net: int
    tax: int
    gross: int


@dataclass(frozen=True)
class Document:
    kind: str
    number: str
    issued: str  # ISO date or timestamp
    currency: str
    seller: Party
    buyer: Party
    lines: list[Line]
    treatment: str  # a billing.rules.tax.Treatment value
    tax_country: str
    email: str = ""
    corrects: str = ""  # a credit note: the number of the invoice it corrects
    reason: str = ""
    totals: list[RateTotal] = field(default_factory=list)

    @property
    def net(self) -> int:
        return sum(line.net for line in self.lines)

    @property
    def tax(self) -> int:
        return sum(line.tax for line in self.lines)

    @property
    def gross(self) -> int:
        return sum(line.gross for line in self.lines)

    @property
    def reverse_charge(self) -> bool:
        return self.treatment == Treatment.REVERSE_CHARGE

    @property
    def not_subject(self) -> bool:
        return self.treatment == Treatment.NOT_SUBJECT

    @property
    def note(self) -> str | None:
        """The wording the invoice must carry (English: the templates translate it)."""
        if self.reverse_charge:
            return REVERSE_CHARGE_NOTE
        if self.not_subject:
            return NOT_SUBJECT_NOTE
        return None


NOT_SUBJECT_NOTE = "Not subject to EU VAT"


def totals_per_rate(lines: list[Line]) -> list[RateTotal]:
    """One total per rate, highest rate first (the Directive's "taxable amount per rate")."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for line in lines:
        total = sums[line.rate]
        total[0] += line.net
        total[1] += line.tax
        total[2] += line.gross
    return [RateTotal(rate, *sums[rate]) for rate in sorted(sums, key=Decimal, reverse=True)]


def _seller(item: Receipt | CreditNote) -> Party:
    seller = item.Seller
    if seller is None:
        return Party(name="")
    return Party(name=seller.Name or "", address=seller.Address or "", country=seller.Country or "",
                 vat_number=seller.VatNumber or "")


def _buyer(item: Receipt | CreditNote) -> Party:
    """The customer: the name stored for the invoice (else the first line of the billing
    address, which is the name given with the card), the address below it."""
    address = [line.strip() for line in (item.BillingAddress or "").splitlines() if line.strip()]
    name = item.BuyerName or ""
    if address and (not name or address[0] == name):
        name, address = address[0], address[1:]
    return Party(name=name, address="\n".join(address), country=item.BuyerCountry or "",
                 vat_number=item.BuyerVatNumber or "")


def _lines(item: Receipt | CreditNote, description: str, start: str | None, end: str | None,
           gross: int) -> list[Line]:
    if item.TaxLines:
        return [line_of(line, item.Currency) for line in item.TaxLines]
    # One line, from the item's own totals (what a single charge is today).
    return [Line(description, start, end, int(item.Net), str(item.TaxRate or "0"), int(item.Tax or 0), gross)]


def line_of(line: TaxLineMap, currency: str) -> Line:
    """A stored line as the document shows it: every reader of an invoice's lines (the
    page, the PDF, the e-mail, the API) words it by this one function."""
    return Line(line.Description, line.PeriodStart, line.PeriodEnd, int(line.Net), str(line.TaxRate),
                int(line.Tax), int(line.Gross), usage_tier(line, currency), stored_seats(line), currency)


def invoice_of(receipt: Receipt) -> Document | None:
    """The receipt as an invoice, or None for an old, tax-blind receipt (no ``Net``)."""
    if receipt.Net is None:
        return None
    lines = _lines(receipt, receipt.ProductName or receipt.SKU, receipt.PeriodStart or receipt.BillingDate,
                   receipt.PeriodEnd, int(receipt.ProcessedAmount))
    return Document(
        kind=DocumentKind.INVOICE, number=receipt.Number or "", issued=receipt.ProcessedDate,
        currency=receipt.Currency, seller=_seller(receipt), buyer=_buyer(receipt), lines=lines,
        treatment=receipt.TaxTreatment or "", tax_country=receipt.TaxCountry or "", email=receipt.Email or "",
        totals=totals_per_rate(lines),
    )


def credit_note_of(note: CreditNote) -> Document:
    lines = _lines(note, "", None, None, int(note.Gross))
    return Document(
        kind=DocumentKind.CREDIT_NOTE, number=note.Number, issued=note.IssuedAt, currency=note.Currency,
        seller=_seller(note), buyer=_buyer(note), lines=lines, treatment=note.TaxTreatment or "",
        tax_country=note.TaxCountry or "", corrects=note.InvoiceNumber or "", reason=note.Reason or "",
        totals=totals_per_rate(lines),
    )
