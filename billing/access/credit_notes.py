"""Credit notes: a refund's correction of an invoice (its receipt), never an edit of it.

Each refund of a tax invoice (a receipt with ``Net``) issues one ``CreditNote`` in the
refund's own TransactWriteItems (billing/access/receipts.py ``record_refund``, a lost
dispute in billing/access/disputes.py), with the negative adds to the tax totals of the
quarter it is issued in. Its figures are the refund's share of the invoice
(``rules.invoice_tax.refund_share``), split over the invoice's lines
(``rules.credit_lines``): worked out from the receipt's list of refunds, so the credit
notes of a fully refunded invoice sum exactly to it, line by line.

Numbers: ``CN-<year>-S<series>-<6 digits>``, their own series (``CRNSEQ#<year>#S<nn>``),
taken as receipt numbers are (billing/access/receipt_numbers.py): inside the refund's
transaction, so a refund refused (recorded meanwhile by another request, a redelivered
dispute) takes no number and leaves no gap. Numbers from before the series
(``CN-2026-000017``) stay valid.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pynamodb.expressions.condition import Condition

from billing.access._common import absent_if_invalid, utc_now
from billing.access.receipt_numbers import NumberSeries
from billing.access.tax_ledger import add_totals, quarter_of_moment
from billing.models import CreditNote, CreditNoteCounter, Receipt, TaxLineMap
from billing.rules.credit_lines import InvoiceLine, Refunded, credit_lines, lines_left
from billing.rules.invoice_tax import refund_share

CREDIT_NOTE_NUMBER = re.compile(r"CN-(?P<year>[0-9]{4})-(?:S(?P<series>[0-9]{2})-)?(?P<seq>[0-9]{6,9})")


def is_credit_note_number(text: str) -> bool:
    """Of a series (``CN-2026-S03-000017``) or from before the series (``CN-2026-000017``)."""
    return bool(CREDIT_NOTE_NUMBER.fullmatch(text))


class CreditNoteNumbers(NumberSeries):
    """Credit note numbers: their own series, their own counters."""

    def __init__(self) -> None:
        super().__init__("CN", CreditNoteCounter)


CREDIT_NOTE_NUMBERS = CreditNoteNumbers()


def is_tax_invoice(receipt: Receipt) -> bool:
    """A receipt written with its tax (older ones are corrected by their refunds alone)."""
    return receipt.Net is not None


def new_credit_note(receipt: Receipt, *, number: str, refund_id: str, amount: int, earlier: list[int | Refunded],
                    reason: str | None, issued_at: datetime | None = None, line: int | None = None) -> CreditNote:
    """The credit note of a refund of ``amount`` after the refunds ``earlier`` (in order:
    ``refunds_so_far``), not yet written: the refund's share of the invoice, negated, line
    by line (``rules.credit_lines``: each invoice line's part of it, or all of it on
    ``line`` alone)."""
    issued_at = issued_at or utc_now()
    share = refund_share(tax=int(receipt.Tax), gross=int(receipt.ProcessedAmount),
                         earlier=[Refunded.of(r).amount for r in earlier],
                         refund=amount)
    issued = issued_at.isoformat(timespec="seconds")
    return CreditNote(
        receipt.PK, CreditNote.sk(issued=issued[:10], number=number),
        Number=number, InvoiceNumber=receipt.Number, ReceiptSK=receipt.SK, RefundId=refund_id, IssuedAt=issued,
        Currency=receipt.Currency, Net=-share.net, Tax=-share.tax, Gross=-share.gross,
        TaxRate=receipt.TaxRate, TaxCountry=receipt.TaxCountry, TaxTreatment=receipt.TaxTreatment,
        TaxLines=_credited_lines(receipt, [*earlier, Refunded(amount, line)]),
        Seller=receipt.Seller, BuyerCountry=receipt.BuyerCountry, BuyerVatNumber=receipt.BuyerVatNumber,
        BuyerName=receipt.BuyerName, BillingAddress=receipt.BillingAddress, Reason=reason or None,
        Language=receipt.Language, TTL=receipt.TTL,
    )


# What a line credited in full keeps of its invoice line besides its figures: its tier's or
# seats' words (a part of a line is named by its description alone: "235 calls × $0.002"
# beside a part of its amount would not add up).
_WHOLE_LINE_WORDS = ("UsageUnits", "UnitAmount", "FlatAmount", "PackageSize", "UnitLabel", "Quantity",
                     "SeatPrice", "SeatsFrom")


def _invoice_lines(receipt: Receipt) -> list[TaxLineMap]:
    """The receipt's stored lines when they add up to its totals, else one line of its
    totals (a receipt written before its lines were): the figures a note's lines take."""
    lines = list(receipt.TaxLines or [])
    if lines and sum(int(line.Gross) for line in lines) == int(receipt.ProcessedAmount) \
            and sum(int(line.Tax) for line in lines) == int(receipt.Tax):
        return lines
    return [TaxLineMap(PeriodStart=receipt.PeriodStart, PeriodEnd=receipt.PeriodEnd, TaxRate=receipt.TaxRate,
                       Tax=int(receipt.Tax), Gross=int(receipt.ProcessedAmount))]  # named by the receipt


def refunds_so_far(receipt: Receipt) -> list[int | Refunded]:
    """The receipt's refunds as its credit notes split them, in order."""
    return [Refunded(int(r.Amount), None if r.Line is None else int(r.Line)) for r in receipt.Refunds or []]


def refundable_lines(receipt: Receipt) -> list[tuple[str, int]] | None:
    """Each invoice line a refund may credit alone: its description and what it still holds
    (gross), in the order of the invoice's lines (the API's ``tax.lines``); None for a
    receipt without lines of its own to choose from (one line, or none: a receipt from
    before taxes)."""
    if not is_tax_invoice(receipt):
        return None
    lines = _invoice_lines(receipt)  # stored lines that do not add up: the receipt's totals, one line
    if len(lines) < 2:
        return None
    left = lines_left([InvoiceLine(int(line.Gross), int(line.Tax)) for line in lines], refunds_so_far(receipt))
    return [(line.Description or receipt.ProductName or receipt.SKU, held) for line, held in zip(lines, left, strict=True)]


def line_left(receipt: Receipt, line: int) -> int | None:
    """What invoice line ``line`` of ``receipt`` still holds, or None when the receipt has
    no such line to refund alone."""
    lines = refundable_lines(receipt)
    return lines[line][1] if lines is not None and 0 <= line < len(lines) else None


def _credited_lines(receipt: Receipt, refunds: list[int | Refunded]) -> list[TaxLineMap]:
    """The last of ``refunds``' credit note lines, negated: a line for each invoice line it
    takes something of."""
    lines = _invoice_lines(receipt)
    credited = credit_lines([InvoiceLine(int(line.Gross), int(line.Tax)) for line in lines], refunds)[-1]
    return [TaxLineMap(Description=line.Description or receipt.ProductName or receipt.SKU,
                       PeriodStart=line.PeriodStart, PeriodEnd=line.PeriodEnd, Net=-part.net, TaxRate=line.TaxRate, Tax=-part.tax, Gross=-part.gross,
                       **({name: getattr(line, name) for name in _WHOLE_LINE_WORDS} if part.whole else {}))
            for line, part in zip(lines, credited, strict=True) if part.gross]


def keep_credit_note_until(note: CreditNote, until: datetime) -> None:
    """Keep a closed account's credit note, as its invoice, for the seller's tax retention
    (never shorter than the TTL it had), then let DynamoDB's TTL delete it."""
    until = max(until, note.TTL) if note.TTL else until
    note.update(actions=[CreditNote.TTL.set(until)], condition=CreditNote.PK.exists())


def add_credit_note(tx: Any, note: CreditNote) -> None:
    """Write ``note`` (only if absent) and its negative adds to the totals of the quarter
    it is issued in, in the transaction ``tx``."""
    tx.save(note, condition=CreditNote.SK.does_not_exist())
    add_totals(tx, note, quarter=quarter_of_moment(note.IssuedAt), invoices=0)


def _credit_notes(account_id: str, only: Condition | None = None) -> list[CreditNote]:
    """The account's credit notes (those ``only`` keeps), newest first: one Query."""
    return list(CreditNote.query(CreditNote.pk(account_id=account_id),
                                 CreditNote.SK.startswith(CreditNote.sk_template.prefix),
                                 filter_condition=only, scan_index_forward=False))


@absent_if_invalid(list)
def get_credit_notes_by_account(account_id: str) -> list[CreditNote]:
    """The account's credit notes, newest first: one Query on ``CRN#``."""
    return _credit_notes(account_id)


@absent_if_invalid()
def get_credit_note(account_id: str, number: str) -> CreditNote | None:
    """The account's credit note numbered ``number`` (one Query), or None."""
    if not is_credit_note_number(number):
        return None
    found = _credit_notes(account_id, CreditNote.Number == number)
    return found[0] if found else None


def credit_notes_of_receipt(receipt: Receipt) -> list[CreditNote]:
    """The credit notes correcting ``receipt``, oldest first (one Query)."""
    return sorted(_credit_notes(receipt.account_id, CreditNote.ReceiptSK == receipt.SK), key=lambda note: (note.IssuedAt, note.Number))
