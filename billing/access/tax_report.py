"""The quarter's VAT report as the command and the staff page show it: the ledger's
items of the quarter (one paginated Query, ``tax_totals``) summed by the pure rules
(billing/rules/tax_report.py)."""

from __future__ import annotations

from billing.access.tax_ledger import tax_totals
from billing.rules.tax_report import TaxReport, build_report, ledger_row


def quarter_tax_report(quarter: str) -> TaxReport:
    """The report of ``quarter`` (``2026Q4``, already checked by ``parse_quarter``)."""
    items = tax_totals(quarter)
    return build_report(quarter, (ledger_row(item.SK, net=item.Net, tax=item.Tax, gross=item.Gross,
                                             invoices=item.Invoices) for item in items))
