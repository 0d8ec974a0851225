"""The customer's data rights in the portal (docs/PORTAL.md, "Your data"): "Download my data"
(one ZIP, streamed) and "Close my account" (after the password and a summary of what
happens). Only the logged-in customer, on their own account (the session's)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_safe

from billing import access
from billing.actions import data_rights
from billing.customers import customer_required
from billing.operations.retention import retention_years
from billing.views.account_export import export_filename, export_zip
from core.language import remember_language
from core.pages import bound_data
from core.payments.errors import GatewayError


def zip_response(account_id: str, language: str | None) -> StreamingHttpResponse:
    response = StreamingHttpResponse(export_zip(account_id, language=language), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{export_filename(account_id)}"'
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
@customer_required
def download_data(request: HttpRequest, account_id: str) -> HttpResponse:
    """GET: what the file holds; POST: the file (a POST: making it is audited)."""
    if request.method == "POST":
        data_rights.record_export(account_id, actor=data_rights.CUSTOMER_ACTOR)
        return zip_response(account_id, get_language())
    return render(request, "portal/download_data.html", {})


class ClosePasswordForm(forms.Form):
    password = forms.CharField(label=gettext_lazy("Your password"), strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))
    confirm = forms.BooleanField(label=gettext_lazy("I understand that closing my account cannot be undone."))

    def __init__(self, user, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError(_("That is not your password."), code="password_incorrect")
        return password


@sensitive_post_parameters("password")
@require_http_methods(["GET", "POST"])
@customer_required
def close_account(request: HttpRequest, account_id: str) -> HttpResponse:
    form = ClosePasswordForm(request.user, bound_data(request))
    collection = access.get_account_collection(account_id)  # the summary's one Query
    if request.method == "POST" and form.is_valid():
        try:
            data_rights.close_account(account_id)
        except GatewayError:
            messages.error(request, _("Our payment processor could not be reached, so your account is not "
                                      "closed yet. Please try again in a few minutes."))
            return redirect("close_account")
        language = get_language()
        logout(request)
        remember_language(request, language)  # the closed page in the language the customer used
        return redirect("account_closed")
    return render(request, "portal/close_account.html", {
        "form": form, "live": [s for s in collection.subscriptions if s.is_live],
        "cards": collection.cards, "receipts": collection.receipts,
        "retention_years": retention_years(),
    })


@require_safe
def account_closed(request: HttpRequest) -> HttpResponse:
    return render(request, "portal/account_closed.html", {"retention_years": retention_years()})
