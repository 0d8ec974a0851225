"""The tax identity every invoice keeps, declared once for both apps' tables.

Billing's receipts and credit notes and the shop's invoices each store, as written when
issued and never changed, the VAT rate, the treatment (a ``billing.rules.tax.Treatment``)
and the buyer's declared country and VAT number. A plain class holding the attributes
is enough: PynamoDB's model metaclass collects ``Attribute`` members from every base
(``inspect.getmembers``), so each model that lists this class among its bases stores
them under the same names as if it declared them itself (tests/core/test_invoice_tax.py).
"""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute


class InvoiceTaxAttributes:
    """Null on documents written before taxes were kept (their pages show them as then)."""

    TaxRate = UnicodeAttribute(null=True)  # percent: "22", "25.5", "0"
    TaxTreatment = UnicodeAttribute(null=True)
    BuyerCountry = UnicodeAttribute(null=True)  # ISO 3166 alpha-2, as the buyer declared it
    BuyerVatNumber = UnicodeAttribute(null=True)
