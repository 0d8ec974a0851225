"""The quarter's VAT ledger (``TaxTotal`` items, partition ``TAXQ#<quarter>``), read by
the quarter's report: one Query, paginated, whatever the number of payments.

A stand-in with the name and shape the tax contract gives this module's owner (the branch
that writes the totals with each receipt and credit note): at the merge theirs is kept."""

from __future__ import annotations

from billing.models import TaxTotal


def tax_totals(quarter: str) -> list[TaxTotal]:
    """Every ``TaxTotal`` item of ``quarter`` (``2026Q4``): its shards per country, rate,
    currency and treatment, and its reverse-charge items per buyer's VAT number."""
    return list(TaxTotal.query(TaxTotal.pk(quarter=quarter)))
