"""Staff's part of a customer's data rights (docs/PORTAL.md, "Your data"), support role: the
customer's "Download my data" file made for them, and their account closed on their
request, each audited with the request's reference (a ticket number)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import data_rights
from billing.operations.retention import retention_years
from billing.staff.common import account_url, back_to_account, confirm_page
from billing.views.data_rights_pages import zip_response
from core.pages import actor
from core.payments.errors import GatewayError


class RequestReferenceForm(forms.Form):
    reference = forms.CharField(max_length=200, label=gettext_lazy("The customer's request (reference)"),
                                help_text=gettext_lazy("The ticket or letter this is done for: kept in the audit log."))


def _account_or_404(account_id: str):
    account = access.get_account(account_id)
    if account is None:
        raise Http404("no account")
    return account


@require_http_methods(["GET", "POST"])
def staff_export_data(request: HttpRequest, account_id: str) -> HttpResponse:
    account = _account_or_404(account_id)
    form = RequestReferenceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data_rights.record_export(account_id, actor=actor(request), staff=True,
                                  reference=form.cleaned_data["reference"])
        # the customer's file: its README in the customer's language
        return zip_response(account_id, account.Language)
    return confirm_page(request, account_id, _("Download the customer's data"),
                        _("Make the customer's \"Download my data\" file (everything rpay holds about the account) "
                          "to send to them? It is recorded in the account's audit log."),
                        form=form, button=_("Download the ZIP file"))


@require_http_methods(["GET", "POST"])
def staff_close_account(request: HttpRequest, account_id: str) -> HttpResponse:
    account = _account_or_404(account_id)
    if account.ClosedDate and request.method == "GET":
        messages.info(request, _("This account is closed already."))
    form = RequestReferenceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            done = data_rights.close_account(account_id, actor=actor(request), staff=True,
                                             reference=form.cleaned_data["reference"])
        except GatewayError:
            return back_to_account(request, account_id, _("The payment processor could not be reached: the "
                                                          "account is not fully closed. Try again in a few minutes."))
        messages.success(request, _("Account closed: %(n)s subscriptions cancelled; its receipts are kept "
                                    "for %(years)s years.") % {"n": len(done.cancelled),
                                                               "years": retention_years()})
        return redirect(account_url(account_id))
    return confirm_page(request, account_id, _("Close the account"),
                        _("Close this account on the customer's request? Every live subscription is cancelled now "
                          "and its unused days refunded, the cards are removed at the payment processor, the "
                          "log-in is deleted and the personal data erased; only the receipts remain, for the "
                          "tax retention period. This cannot be undone."),
                        form=form, button=_("Close the account"), danger=True)
