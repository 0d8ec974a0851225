"""The staff page "Business & tax": the seller's legal name, address, VAT number and the
settings the VAT of every invoice follows. Anyone who sees billing may read it; the
finance role (and an admin, who has every permission) changes it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import seller
from billing.models import SELLER_EVENTS_ACCOUNT, SellerProfile
from billing.staff.account_page import event_changes
from billing.staff.common import changed_since
from billing.staff.forms import SellerProfileForm
from core.countries import country_name
from core.pages import actor, bound_data
from core.staff import MONEY, forbidden, render_staff

RECENT_CHANGES = 10


def _initial(profile: SellerProfile) -> dict:
    registrations = access.registrations_of(profile)
    return {"legal_name": profile.LegalName, "address": profile.Address or "", "country": profile.Country,
            "vat_number": profile.VatNumber or "", "oss_registered": bool(profile.OssRegistered),
            "under_threshold": bool(profile.UnderThreshold), "prices_include_tax": bool(profile.PricesIncludeTax),
            "registrations": "\n".join(f"{country} {percent}" for country, percent in sorted(registrations.items()))}


def version_of(profile: SellerProfile) -> str:
    """The version the form is drawn from: "0" while the settings stand in (none stored)."""
    return str(profile.Version or 0)


def _now(profile: SellerProfile) -> str:
    return _("Now: %(name)s, %(country)s, VAT number %(vat)s.") % {
        "name": profile.LegalName, "country": country_name(profile.Country), "vat": profile.VatNumber or "—"}


@require_http_methods(["GET", "POST"])
def business_tax(request: HttpRequest) -> HttpResponse:
    profile = access.get_seller_profile()
    may_change = request.user.has_perm(MONEY)
    if request.method == "POST" and not may_change:
        return forbidden(request, MONEY)
    form = SellerProfileForm(bound_data(request), initial=_initial(profile))
    if not may_change:
        for field in form.fields.values():
            field.disabled = True

    def page() -> HttpResponse:
        return render_staff(request, "staff/business_tax.html", _("Business & tax"), {
            "form": form, "version": version_of(profile), "may_change": may_change, "profile": profile,
            "stored": profile.Version is not None, "now": _now(profile) if request.method == "POST" else None,
            # who changed what, newest first (one Query of the profile's audit partition)
            "events": [{"event": e, "changes": event_changes(e.Before, e.After)}
                       for e in access.get_events_by_account(SELLER_EVENTS_ACCOUNT)[:RECENT_CHANGES]]})

    if request.method == "POST" and request.POST.get("version", "") != version_of(profile):
        # Saved by someone else since this form was drawn: nothing saved; the form again,
        # what was typed kept, with the profile as it is now.
        return changed_since(request, page)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            seller.change_seller_profile(
                profile, legal_name=data["legal_name"].strip(), address=data["address"].strip() or None,
                country=data["country"], vat_number=data["vat_number"] or None,
                oss_registered=data["oss_registered"], under_threshold=data["under_threshold"],
                prices_include_tax=data["prices_include_tax"], registrations=data["registrations"],
                actor=actor(request))
        except access.ConditionFailed:
            profile = access.get_seller_profile(fresh=True)
            return changed_since(request, page)
        messages.success(request, _("The business and tax profile is saved. Invoices from now on follow it."))
        return redirect("admin:staff_business_tax")
    return page()
