"""The tax ledger: an invoice's tax attributes on its receipt, and the quarter's running
totals (``TaxTotal``) that every invoice and credit note adds to **in its own
TransactWriteItems**, so the quarter's report is a Query of a few hundred items at any size
and a payment stays at two requests (docs/TABLE.md, "Tax totals").

The totals are ``ADD``-only: an invoice adds its net, tax, gross and 1 invoice; a credit
note adds its negative figures to the quarter it is issued in. The totals are the
seller's: the key starts with the document's own seller snapshot (its VAT number), so a
seller changed within a quarter gets a report of its own. Each country, rate,
currency and treatment is spread over 16 shards chosen from the invoice's key: two
transactions that update one item at once conflict (``TransactionConflict``) and one must
be retried, and a busy country's payments would otherwise all meet on one item.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from django.conf import settings

from billing.access import seller as seller_access
from billing.access.tax_identity import buyer_of
from billing.models import Receipt, SellerMap, Subscription, TaxLineMap, TaxTotal
from billing.rules.invoice_tax import (
    TaxTerms,
    is_reverse_charge,
    line_of_metadata,
    rate_text,
    total_shard,
)
from billing.rules.tax import Seller, TaxLine, applicable_rate, includes_tax, quarter_of, tax_line
from billing.rules.tax_report import seller_key
from core.clock import billing_today


@dataclass(frozen=True)
class InvoiceSeller:
    """The seller as an invoice needs it: the tax rules' ``Seller`` and the printed party."""

    tax: Seller
    name: str | None
    address: str | None

    def snapshot(self) -> SellerMap:
        return SellerMap(Name=self.name, Address=self.address, Country=self.tax.country,
                         VatNumber=self.tax.vat_number)


def invoice_seller() -> InvoiceSeller:
    """The seller now (one read of its profile once stored: a payment run reads it once)."""
    profile = seller_access.get_seller_profile()
    return InvoiceSeller(seller_access.seller_of(profile), profile.LegalName, profile.Address)


def tax_terms(sub: Subscription | Any, seller: Seller | None = None, *,
              tax_behavior: str | None = None) -> TaxTerms:
    """What a subscription's charges are taxed by: the seller and its buyer (the
    subscription's copy of the billing country and VAT number: no read), its amounts
    including the tax as its price's ``TaxBehavior`` says (the subscription's copy; or
    ``tax_behavior``, a price about to be subscribed to), else as the seller's profile does."""
    seller = seller or seller_access.seller_tax()
    behavior = tax_behavior or getattr(sub, "TaxBehavior", None)
    include = includes_tax(behavior, seller.prices_include_tax)
    if include != seller.prices_include_tax:
        seller = replace(seller, prices_include_tax=include)
    return TaxTerms(seller, buyer_of(sub, seller.country))


@dataclass(frozen=True)
class InvoiceTax:
    """A charge's tax and parties, to be written on its receipt."""

    line: TaxLine
    prices_include_tax: bool
    seller: InvoiceSeller
    buyer_country: str
    buyer_vat_number: str | None


def invoice_tax(sub: Subscription, *, amount: int, on: date, metadata: dict[str, str] | None = None,
                seller: InvoiceSeller | None = None) -> InvoiceTax:
    """The tax of a charge of ``amount`` (the gross charged) to ``sub`` invoiced on ``on``:
    the figures its metadata carries (what was charged), else the tax included in it at the
    rate in force (a charge made before taxes were kept, or without a gateway)."""
    seller = seller or invoice_seller()
    buyer = buyer_of(sub, seller.tax.country)
    line = line_of_metadata(metadata or {}, amount)
    if line is None:
        line = tax_line(amount, applicable_rate(seller.tax, buyer, on), prices_include_tax=True)
    include = (metadata or {}).get("prices_include_tax")
    behaves = tax_terms(sub, seller.tax).prices_include_tax  # a charge whose metadata does not say
    return InvoiceTax(line=line, prices_include_tax=behaves if include is None else include == "1",
                      seller=seller, buyer_country=buyer.country, buyer_vat_number=buyer.vat_number)


def write_invoice_tax(receipt: Receipt, tax: InvoiceTax) -> None:
    """Set the invoice's tax attributes on a receipt not written yet (one line per charge)."""
    line = tax.line
    receipt.Net, receipt.Tax = line.net, line.tax
    receipt.TaxRate, receipt.TaxCountry = rate_text(line.rate.percent), line.rate.country
    receipt.TaxTreatment, receipt.PricesIncludeTax = str(line.rate.treatment), tax.prices_include_tax
    receipt.TaxLines = [TaxLineMap(Description=receipt.ProductName or receipt.SKU, PeriodStart=receipt.PeriodStart,
                                   PeriodEnd=receipt.PeriodEnd, Net=line.net, TaxRate=receipt.TaxRate, Tax=line.tax,
                                   Gross=line.gross)]
    receipt.Seller = tax.seller.snapshot()
    receipt.BuyerCountry, receipt.BuyerVatNumber = tax.buyer_country, tax.buyer_vat_number
    receipt.BuyerName = buyer_name(receipt.BillingAddress)


def buyer_name(billing_address: str | None) -> str | None:
    """The name on a card's billing address (its first line, when it has several)."""
    lines = [part.strip() for part in (billing_address or "").splitlines() if part.strip()]
    return lines[0] if len(lines) > 1 else None


def quarter_of_moment(moment: str | datetime) -> str:
    """The quarter an invoice or credit note issued at ``moment`` counts in (the billing
    time zone's day)."""
    at = datetime.fromisoformat(moment) if isinstance(moment, str) else moment
    return quarter_of(billing_today(settings.BILLING_TIMEZONE, at))


def add_totals(tx: Any, item: Any, *, quarter: str, invoices: int) -> None:
    """ADD the figures of an invoice (``invoices=1``) or a credit note (0; its figures are
    negative) to the quarter's totals, in the transaction ``tx``: its country-and-rate
    total (one shard of 16, from its key) and, reverse charged, the buyer's."""
    if item.Net is None or item.TaxCountry is None:
        return  # a receipt from before taxes: in no total
    # The document's own seller (the snapshot it prints; a credit note copies its
    # invoice's), never the seller of today: a refund after a change of seller lowers the
    # seller who invoiced.
    snapshot = item.Seller or invoice_seller().snapshot()
    seller = seller_key(snapshot.VatNumber, snapshot.Country)
    named = [TaxTotal.EntityType.set(TaxTotal),  # an UpdateItem creates the item on first use
             *([TaxTotal.SellerName.set(snapshot.Name)] if snapshot.Name else []),
             *([TaxTotal.SellerCountry.set(snapshot.Country)] if snapshot.Country else [])]
    sk = TaxTotal.sk(seller=seller, country=item.TaxCountry, rate=item.TaxRate, currency=item.Currency,
                     treatment=item.TaxTreatment, shard=f"{total_shard(item.PK + item.SK):02d}")
    actions = [TaxTotal.Net.add(int(item.Net)), TaxTotal.Tax.add(int(item.Tax)),
               TaxTotal.Gross.add(int(item.Net) + int(item.Tax)), TaxTotal.Invoices.add(invoices), *named]
    tx.update(TaxTotal(TaxTotal.pk(quarter=quarter), sk), actions=actions)
    if is_reverse_charge(item.TaxTreatment) and item.BuyerVatNumber:
        rc = TaxTotal.reverse_charge_template.format(seller=seller, vat_number=item.BuyerVatNumber,
                                                     currency=item.Currency)
        tx.update(TaxTotal(TaxTotal.pk(quarter=quarter), rc), actions=[TaxTotal.Net.add(int(item.Net)), *named])


def add_receipt_totals(tx: Any, receipt: Receipt) -> None:
    """An invoice's adds to the totals of the quarter it is dated in."""
    add_totals(tx, receipt, quarter=quarter_of_moment(receipt.ProcessedDate), invoices=1)


def tax_totals(quarter: str) -> list[TaxTotal]:
    """Every total of ``quarter`` (shards and reverse-charge sales): one paginated Query."""
    return list(TaxTotal.query(TaxTotal.pk(quarter=quarter)))
