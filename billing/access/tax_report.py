"""The quarter's VAT report as the command and the staff page show it: the ledger's
items of the quarter (one paginated Query, ``tax_totals``) summed by the pure rules
(billing/rules/tax_report.py), one report per seller."""

from __future__ import annotations

from collections.abc import Iterable

from billing.access.tax_ledger import tax_totals
from billing.models import TaxTotal
from billing.rules.tax_report import LedgerRow, TaxReport, build_reports, ledger_row


def _rows(items: Iterable[TaxTotal]) -> Iterable[LedgerRow]:
    return (ledger_row(item.SK, net=item.Net, tax=item.Tax, gross=item.Gross, invoices=item.Invoices,
                       seller_name=item.SellerName, seller_country=item.SellerCountry) for item in items)


def quarter_tax_reports(quarter: str) -> list[TaxReport]:
    """The reports of ``quarter`` (``2026Q4``, already checked by ``parse_quarter``), one
    per seller; the totals written before the seller was in the key last, as a report
    whose seller is not recorded. One Query, whatever the number of sellers."""
    return build_reports(quarter, _rows(tax_totals(quarter)))
