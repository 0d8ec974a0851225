"""The seller's business and tax profile: one item (``SellerProfile``), changed by staff on
the "Business & tax" page, read by every invoice. Until staff save it, the settings
``RPAY_SELLER`` (name, address, tax id) and ``RPAY_SELLER_COUNTRY`` stand in.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from pynamodb.exceptions import DoesNotExist

from billing.access._common import iso_now, refused_as
from billing.access.events import new_event
from billing.exceptions import ConditionFailed
from billing.models import SELLER_EVENTS_ACCOUNT, AuditAction, SellerProfile
from billing.rules.tax import Seller
from billing.rules.vat_numbers import compact
from core.dynamo import engine
from core.requestmemo import forget, once_per_request

SELLER_MEMO = "billing.seller_profile"


def default_seller_profile() -> SellerProfile:
    """The profile the settings give, never stored (``Version`` None)."""
    seller = getattr(settings, "RPAY_SELLER", {}) or {}
    tax_id = compact(seller.get("tax_id") or "") or None
    country = (getattr(settings, "RPAY_SELLER_COUNTRY", "") or (tax_id or "")[:2] or "IT").upper()
    return SellerProfile(
        SellerProfile.pk(), SellerProfile.sk(), LegalName=seller.get("name") or "rpay",
        Address=seller.get("address") or None, Country=country, VatNumber=tax_id,
        OssRegistered=True, UnderThreshold=False, PricesIncludeTax=True, Registrations=None,
    )


def get_seller_profile(*, fresh: bool = False) -> SellerProfile:
    """The stored profile (one GetItem, once per web request: every amount of a page is
    taxed by the same profile), or the settings' when none is stored. ``fresh``: read it
    again (a form checking what it saves against)."""
    if fresh:
        forget(SELLER_MEMO)
    return once_per_request(SELLER_MEMO, _read_seller_profile)


def _read_seller_profile() -> SellerProfile:
    try:
        return SellerProfile.get(SellerProfile.pk(), SellerProfile.sk(), consistent_read=True)
    except DoesNotExist:
        return default_seller_profile()


def registrations_of(profile: SellerProfile) -> dict[str, Decimal]:
    # A raw MapAttribute reads back as a MapAttribute, but one set in code stays a dict.
    registrations = profile.Registrations
    stored = registrations.as_dict() if hasattr(registrations, "as_dict") else dict(registrations or {})
    return {country.upper(): Decimal(str(percent)) for country, percent in stored.items()}


def seller_of(profile: SellerProfile) -> Seller:
    return Seller(
        country=profile.Country, vat_number=profile.VatNumber, oss_registered=bool(profile.OssRegistered),
        under_threshold=bool(profile.UnderThreshold), prices_include_tax=bool(profile.PricesIncludeTax),
        registrations=registrations_of(profile),
    )


def seller_tax() -> Seller:
    """The seller as the tax rules take it (``billing.rules.tax.Seller``): one GetItem, so
    callers that run per payment read it once per run."""
    return seller_of(get_seller_profile())


def seller_snapshot(profile: SellerProfile) -> dict[str, Any]:
    return {"LegalName": profile.LegalName, "Address": profile.Address, "Country": profile.Country,
            "VatNumber": profile.VatNumber, "OssRegistered": bool(profile.OssRegistered),
            "UnderThreshold": bool(profile.UnderThreshold), "PricesIncludeTax": bool(profile.PricesIncludeTax),
            "Registrations": {k: str(v) for k, v in registrations_of(profile).items()}}


def save_seller_profile(current: SellerProfile, *, legal_name: str, address: str | None, country: str,
                        vat_number: str | None, oss_registered: bool, under_threshold: bool,
                        prices_include_tax: bool, registrations: dict[str, Decimal], actor: str) -> SellerProfile:
    """Store the profile with its audit event, only if it is still the version ``current``
    was read at (``ConditionFailed`` otherwise: another staff member saved it meanwhile).
    ``current`` never stored (the settings' stand-in): only if none is stored yet."""
    profile = SellerProfile(
        SellerProfile.pk(), SellerProfile.sk(), LegalName=legal_name, Address=address or None,
        Country=country.upper(), VatNumber=vat_number or None, OssRegistered=oss_registered,
        UnderThreshold=under_threshold, PricesIncludeTax=prices_include_tax,
        Registrations={k.upper(): str(v) for k, v in registrations.items()} or None,
        UpdatedAt=iso_now(),
    )
    if current.Version is not None:
        profile.Version = current.Version
    event = new_event(SELLER_EVENTS_ACCOUNT, actor=actor, action=AuditAction.SELLER_PROFILE_CHANGED,
                      subject=profile.PK, before=seller_snapshot(current), after=seller_snapshot(profile))
    with refused_as(ConditionFailed, profile.PK), engine.transact_write() as tx:
        # PynamoDB's version check: the same Version as read, or none stored yet.
        tx.save(profile)
        tx.save(event)
    forget(SELLER_MEMO)
    return profile
