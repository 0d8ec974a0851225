"""The demo's invoices: tax figures on a seeded receipt, and the credit note of a seeded
refund, written as the payment run and the refund write them (their figures from
``billing.rules.tax``, never typed), for receipts and refunds made without them.

Both writes are conditional and only fill what is missing: once the payment run writes
a receipt's tax figures with the receipt and a refund issues its own credit note, these
find the figures there and write nothing.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from billing.access._common import iso_now
from billing.access.credit_notes import credit_notes_of_receipt, get_credit_notes_by_account
from billing.models import CreditNote, Receipt, Refund, SellerMap, TaxLineMap
from billing.rules.tax import Buyer, Seller, Treatment, applicable_rate, tax_line
from billing.rules.tax import Rate as TaxRate

# How long a credit note is kept: as long as the invoices it corrects (ten years: the
# longest member-state retention rpay knows).
CREDIT_NOTE_RETENTION = timedelta(days=3653)


def _percent(rate: TaxRate) -> str:
    return f"{rate.percent.normalize():f}"


def record_demo_tax_figures(receipt: Receipt, *, seller: Seller, seller_name: str, seller_address: str,
                       buyer: Buyer, buyer_name: str | None) -> Receipt:
    """Give a receipt its invoice figures (the rate of its billing date for ``buyer``, the
    charge split into net and tax), unless it has them: one conditional UpdateItem."""
    if receipt.Net is not None:
        return receipt
    rate = applicable_rate(seller, buyer, date.fromisoformat(receipt.BillingDate))
    # The charge was made: with tax-inclusive prices it is the gross; without, the price
    # was the net and the charge net + tax (the payment run's rule), so split it back.
    line = tax_line(int(receipt.ProcessedAmount), rate, prices_include_tax=True)
    percent = _percent(rate)
    receipt.update(actions=[
        Receipt.Net.set(line.net), Receipt.Tax.set(line.tax), Receipt.TaxRate.set(percent),
        Receipt.TaxCountry.set(rate.country), Receipt.TaxTreatment.set(rate.treatment.value),
        Receipt.PricesIncludeTax.set(seller.prices_include_tax),
        Receipt.TaxLines.set([TaxLineMap(
            Description=receipt.ProductName or receipt.SKU, PeriodStart=receipt.PeriodStart or receipt.BillingDate,
            PeriodEnd=receipt.PeriodEnd, Net=line.net, TaxRate=percent, Tax=line.tax, Gross=line.gross)]),
        Receipt.Seller.set(SellerMap(Name=seller_name, Address=seller_address, Country=seller.country,
                                          VatNumber=seller.vat_number)),
        Receipt.BuyerCountry.set(buyer.country),
        *([Receipt.BuyerVatNumber.set(buyer.vat_number)] if buyer.vat_number else []),
        *([Receipt.BuyerName.set(buyer_name)] if buyer_name else []),
    ], condition=Receipt.SK.exists() & Receipt.Net.does_not_exist())
    return receipt


def issue_demo_credit_note(receipt: Receipt, refund: Refund, *, reason: str | None = None) -> CreditNote | None:
    """The credit note of one refund of an invoice, unless it has one: the refunded amount
    split at the invoice's rate, negative. None for a tax-blind receipt."""
    if receipt.Net is None:
        return None
    existing = next((note for note in credit_notes_of_receipt(receipt) if note.RefundId == refund.RefundId), None)
    if existing is not None:
        return existing
    issued = iso_now()
    year = issued[:4]
    # Numbered within the account's own notes: the demo is the only issuer here.
    count = sum(1 for note in get_credit_notes_by_account(receipt.account_id) if note.Number.startswith(f"CN-{year}-"))
    number = f"CN-{year}-{count + 1:06d}"
    rate = str(receipt.TaxRate or "0")
    split = tax_line(int(refund.Amount), TaxRate(Decimal(rate), receipt.TaxCountry or "",
                                                 Treatment(receipt.TaxTreatment or Treatment.NOT_SUBJECT)),
                     prices_include_tax=True)
    net, tax, gross = -split.net, -split.tax, -split.gross
    first = (receipt.TaxLines or [None])[0]
    note = CreditNote(
        CreditNote.pk(account_id=receipt.account_id), CreditNote.sk(issued=issued[:10], number=number),
        Number=number, InvoiceNumber=receipt.Number, ReceiptSK=receipt.SK, RefundId=refund.RefundId, IssuedAt=issued,
        Currency=receipt.Currency, Net=net, Tax=tax, Gross=gross, TaxRate=rate, TaxCountry=receipt.TaxCountry,
        TaxTreatment=receipt.TaxTreatment,
        TaxLines=[TaxLineMap(Description=first.Description if first else (receipt.ProductName or receipt.SKU),
                              PeriodStart=receipt.PeriodStart, PeriodEnd=receipt.PeriodEnd, Net=net, TaxRate=rate,
                              Tax=tax, Gross=gross)],
        Seller=receipt.Seller, BuyerCountry=receipt.BuyerCountry, BuyerVatNumber=receipt.BuyerVatNumber,
        BuyerName=receipt.BuyerName, BillingAddress=receipt.BillingAddress, Reason=reason or refund.Reason,
        Language=receipt.Language, TTL=datetime.now(UTC) + CREDIT_NOTE_RETENTION,
    )
    note.save(condition=CreditNote.SK.does_not_exist())
    return note
