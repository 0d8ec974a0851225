"""The seller's business and tax profile, changed by staff ("Business & tax"): the write
and its audit event are the access layer's (one transaction); nobody is e-mailed."""

from __future__ import annotations

from decimal import Decimal

from billing import access
from billing.models import SellerProfile


def change_seller_profile(current: SellerProfile, *, legal_name: str, address: str | None, country: str,
                          vat_number: str | None, oss_registered: bool, under_threshold: bool,
                          prices_include_tax: bool, registrations: dict[str, Decimal], actor: str) -> SellerProfile:
    """Store the profile if it is still the version ``current`` was read at
    (``access.ConditionFailed`` otherwise). Invoices already issued keep their own copy."""
    return access.save_seller_profile(
        current, legal_name=legal_name, address=address, country=country, vat_number=vat_number,
        oss_registered=oss_registered, under_threshold=under_threshold, prices_include_tax=prices_include_tax,
        registrations=registrations, actor=actor)
