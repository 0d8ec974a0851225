"""The quarter's VAT ledger (``TaxTotal`` items, partition ``TAXQ#<quarter>``), read by
the quarter's report: one Query, paginated, whatever the number of payments."""

from __future__ import annotations

from billing.models import TaxTotal


def tax_totals(quarter: str) -> list[TaxTotal]:
    """Every ``TaxTotal`` item of ``quarter`` (``2026Q4``): its shards per country, rate,
    currency and treatment, and its reverse-charge items per buyer's VAT number."""
    return list(TaxTotal.query(TaxTotal.pk(quarter=quarter)))
