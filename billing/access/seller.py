"""The seller's tax profile and the buyer of a subscription, as the tax rules take them.

A stand-in with the names the seller's profile (``SellerProfile``, the staff page
"Business & tax") will keep: until it exists, the settings ``RPAY_SELLER`` (name,
address, tax id) and ``RPAY_SELLER_COUNTRY`` are the seller, prices include tax, and a
subscription's buyer is its ``BillingCountry`` and ``VatNumber`` (else the seller's
country, a consumer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings

from billing.rules.tax import Buyer, Seller


@dataclass(frozen=True)
class SellerProfile:
    """The attributes of the stored profile that an invoice reads."""

    LegalName: str
    Address: str | None
    Country: str
    VatNumber: str | None
    OssRegistered: bool = True
    UnderThreshold: bool = False
    PricesIncludeTax: bool = True
    Registrations: dict[str, str] | None = field(default=None)
    Version: int | None = None


def default_seller_profile() -> SellerProfile:
    seller = getattr(settings, "RPAY_SELLER", {}) or {}
    tax_id = "".join(ch for ch in (seller.get("tax_id") or "") if ch.isalnum()).upper() or None
    country = (getattr(settings, "RPAY_SELLER_COUNTRY", "") or (tax_id or "")[:2] or "IT").upper()
    return SellerProfile(LegalName=seller.get("name") or "rpay", Address=seller.get("address") or None,
                         Country=country, VatNumber=tax_id)


def get_seller_profile() -> SellerProfile:
    return default_seller_profile()


def seller_of(profile: SellerProfile) -> Seller:
    registrations = {k.upper(): Decimal(str(v)) for k, v in (profile.Registrations or {}).items()}
    return Seller(country=profile.Country, vat_number=profile.VatNumber, oss_registered=bool(profile.OssRegistered),
                  under_threshold=bool(profile.UnderThreshold), prices_include_tax=bool(profile.PricesIncludeTax),
                  registrations=registrations)


def seller_tax() -> Seller:
    return seller_of(get_seller_profile())


def buyer_of(item: object, seller: Seller | None = None) -> Buyer:
    """The buyer of an account or a subscription: its ``BillingCountry`` and ``VatNumber``
    (copied onto each live subscription: no read); no country, the seller's."""
    country = getattr(item, "BillingCountry", None) or (seller or seller_tax()).country
    return Buyer(country=country.upper(), vat_number=getattr(item, "VatNumber", None) or None)
