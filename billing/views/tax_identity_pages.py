"""The customer's billing country and VAT number ("Billing details"): one form, saved by
one action (the account and each live subscription). The VAT number shows how far it was
checked: "format valid", or "confirmed by VIES on <date>" when VIES is on."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import tax_identity
from billing.customers import customer_required
from billing.forms import TaxIdentityForm, vat_status
from billing.views.subscribe_pages import checked_vat_number, tax_identity_initial
from core.countries import country_name
from core.pages import actor, bound_data, or_404


@require_http_methods(["GET", "POST"])
@customer_required
def billing_details(request: HttpRequest, account_id: str) -> HttpResponse:
    collection = access.get_account_collection(account_id)  # the account and its subscriptions: one Query
    account = or_404(collection.account, "no account")
    form = TaxIdentityForm(bound_data(request), initial=tax_identity_initial(account))
    verdict = checked_vat_number(request, form, account) if request.method == "POST" else None
    if request.method == "POST" and form.is_valid():
        updated = tax_identity.change_tax_identity(account, form.cleaned_data["billing_country"], verdict,
                                                   actor=actor(request), subscriptions=collection.subscriptions)
        messages.success(request, _("Your billing details are saved. Your next invoices follow them.")
                         if updated or collection.live_subscriptions else _("Your billing details are saved."))
        return redirect("billing_details")
    return render(request, "portal/billing_details.html", {
        "form": form, "account": account, "country": country_name(account.BillingCountry),
        "vat_status": vat_status(account),
    })
