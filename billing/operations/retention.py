"""How long an invoice is kept: the years tax law gives where the seller is
(``RPAY_SELLER_COUNTRY`` in ``INVOICE_RETENTION_YEARS``), counted from the day it was
issued. A closed account's receipts and credit notes are kept until then
(billing/actions/data_rights.py), a charge refunded after the close too
(billing/operations/refunds.py), and the shop's invoices as long
(``billing.customers.invoice_retained_until``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.conf import settings

from billing.models import Receipt


def retention_years() -> int:
    """How long tax law keeps invoices where the seller is (``RPAY_SELLER_COUNTRY``)."""
    return int(settings.INVOICE_RETENTION_YEARS.get(settings.RPAY_SELLER_COUNTRY,
                                                    settings.INVOICE_RETENTION_DEFAULT_YEARS))


def retention_end(issued: date, years: int) -> datetime:
    """``years`` after the day an invoice was issued (a 29 February becomes the 28th), at
    midnight UTC: when tax law lets it go. The shop's invoices use it too (shop/data_rights.py)."""
    try:
        end = issued.replace(year=issued.year + years)
    except ValueError:
        end = issued.replace(year=issued.year + years, day=28)
    return datetime(end.year, end.month, end.day, tzinfo=UTC)


def retained_until(receipt: Receipt, years: int) -> datetime:
    """The end of a receipt's retention: ``years`` after its billing date, never earlier
    than the TTL it had."""
    until = retention_end(date.fromisoformat(receipt.BillingDate), years)
    return max(until, receipt.TTL) if receipt.TTL else until
