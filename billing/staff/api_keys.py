"""The REST API's keys (docs/API.md), for staff with the admin role (a superuser: the
role that holds every permission): the keys with their last use, a form that makes one
and shows it this once (only its hash is kept), and revoking one (refused from its next
call on)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import api_keys as actions
from billing.models import ApiKeyScope
from core.pages import actor
from core.staff import INTEGRATIONS, render_staff

# The admin role's (as the webhook endpoints are): a key acts on every account.
MANAGE_API_KEYS = INTEGRATIONS


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, label=gettext_lazy("Name"),
                           help_text=gettext_lazy("Who or what uses it: the audit log names its changes by it."))
    scope = forms.ChoiceField(label=gettext_lazy("Scope"), choices=[
        (ApiKeyScope.READ, gettext_lazy("read: reads only")),
        (ApiKeyScope.WRITE, gettext_lazy("write: reads and changes")),
    ])

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name.isprintable():
            raise forms.ValidationError(_("Use printable characters only."))
        return name


@require_http_methods(["GET", "POST"])
def api_keys(request: HttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    made = None
    if request.method == "POST" and form.is_valid():
        key, secret = actions.create_key(form.cleaned_data["name"], form.cleaned_data["scope"], actor=actor(request))
        made = {"key": key, "secret": secret}
        form = ApiKeyForm()
    return render_staff(request, "staff/api_keys.html", _("API keys"), {
        "keys": sorted(access.list_api_keys(), key=lambda k: k.CreatedAt, reverse=True), "form": form, "made": made,
    })


@require_http_methods(["GET", "POST"])
def api_key_revoke(request: HttpRequest, key_id: str) -> HttpResponse:
    """POST (the list's button) revokes; a GET goes back to the list."""
    if request.method == "GET":
        return redirect("admin:staff_api_keys")
    key = access.find_api_key(key_id)
    if key is None:
        messages.error(request, _("No such key."))
    elif not key.revoked:
        actions.revoke_key(key, actor=actor(request))
        messages.success(request, _("Key %(name)s revoked: it is refused from now on.") % {"name": key.Name})
    return redirect("admin:staff_api_keys")
