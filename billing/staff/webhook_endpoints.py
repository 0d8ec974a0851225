"""The merchant's webhook endpoints (outbound webhooks): the list (one Query) with a banner
for any the sender disabled, an endpoint's page with its delivery log (one Query, newest
first), and the admin role's changes: add one (its secret shown once, on the page that
answers the form), rotate its secret, disable and enable it, resend a delivery, send a
test event (billing/actions/webhook_endpoints.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import webhook_endpoints as actions
from billing.models import DeliveryStatus, EndpointStatus
from billing.rules.webhook_retries import WEBHOOK_EVENT_TYPES
from billing.staff.common import add_page
from core.net import UnsafeURL
from core.pages import actor, bound_data, or_404
from core.staff import INTEGRATIONS, render_staff

DELIVERY_LABELS = {
    DeliveryStatus.PENDING: gettext_lazy("pending"),
    DeliveryStatus.FAILED: gettext_lazy("failed, to retry"),
    DeliveryStatus.SUCCEEDED: gettext_lazy("delivered"),
    DeliveryStatus.ABANDONED: gettext_lazy("abandoned"),
}


class EndpointForm(forms.Form):
    url = forms.CharField(label=gettext_lazy("URL"), max_length=2000,
                          help_text=gettext_lazy("https:// only, on a public address."))
    event_types = forms.MultipleChoiceField(
        label=gettext_lazy("Event types"), required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(t, t) for t in WEBHOOK_EVENT_TYPES],
        help_text=gettext_lazy("None ticked: every type, those added later too."))
    description = forms.CharField(label=gettext_lazy("Description"), max_length=actions.MAX_DESCRIPTION,
                                  required=False)

    def clean_url(self) -> str:
        try:
            return actions.check_endpoint_url(self.cleaned_data["url"])
        except UnsafeURL as refused:
            raise forms.ValidationError(_("This URL is refused: %(reason)s.") % {"reason": refused}) from None


def webhook_endpoints(request: HttpRequest) -> HttpResponse:
    endpoints = access.list_endpoints()
    return render_staff(request, "staff/webhook_endpoints.html", _("Webhook endpoints"), {
        "endpoints": endpoints,
        "disabled_by_sender": [e for e in endpoints if e.Status == EndpointStatus.DISABLED
                               and e.DisabledReason == "failing"],
        "may_change": request.user.has_perm(INTEGRATIONS),
    })


@require_http_methods(["GET", "POST"])
def webhook_endpoint_add(request: HttpRequest) -> HttpResponse:
    def add(data: dict[str, Any]) -> HttpResponse:
        endpoint, secret = actions.create_endpoint(data["url"], data["event_types"], actor=actor(request),
                                                   description=data["description"])
        return _secret_page(request, endpoint, secret, _("Endpoint added."))

    return add_page(request, EndpointForm(bound_data(request)), _("Add a webhook endpoint"),
                    "admin:staff_webhook_endpoints", add)


def _secret_page(request: HttpRequest, endpoint, secret: str, note: str) -> HttpResponse:
    """The one page that shows a secret: answered to the POST, never stored in a session
    (and, as every admin page, never cached)."""
    return render_staff(request, "staff/webhook_secret.html", _("Signing secret"), {
        "endpoint": endpoint, "secret": secret, "note": note})


def webhook_endpoint(request: HttpRequest, endpoint_id: str) -> HttpResponse:
    endpoint = or_404(access.get_endpoint(endpoint_id), "No such endpoint")
    log = access.delivery_log(endpoint.EndpointId)
    return render_staff(request, "staff/webhook_endpoint.html", _("Webhook endpoint %(url)s") % {"url": endpoint.Url}, {
        "endpoint": endpoint,
        "rows": [{"d": d, "status": DELIVERY_LABELS.get(d.Status, d.Status)} for d in log],
        "full": len(log) >= access.DELIVERY_LOG_PAGE, "page_size": access.DELIVERY_LOG_PAGE,
        "may_change": request.user.has_perm(INTEGRATIONS),
        "enabled": endpoint.Status == EndpointStatus.ENABLED,
    })


def webhook_endpoint_rotate(request: HttpRequest, endpoint_id: str) -> HttpResponse:
    endpoint = or_404(access.get_endpoint(endpoint_id), "No such endpoint")
    if request.method != "POST":
        return _back(endpoint)
    try:
        secret = actions.rotate_secret(endpoint, actor=actor(request))
    except access.ConditionFailed:
        messages.error(request, _("The secret was rotated meanwhile in another tab; nothing was changed."))
        return _back(endpoint)
    return _secret_page(request, endpoint, secret,
                        _("Secret rotated. The previous secret also signs every delivery for the next 24 hours."))


def webhook_endpoint_status(request: HttpRequest, endpoint_id: str) -> HttpResponse:
    endpoint = or_404(access.get_endpoint(endpoint_id), "No such endpoint")
    if request.method != "POST":
        return _back(endpoint)
    if request.POST.get("status") == EndpointStatus.ENABLED:
        actions.enable_endpoint(endpoint, actor=actor(request))
        messages.success(request, _("Endpoint enabled: deliveries resume where they stopped."))
    else:
        actions.disable_endpoint(endpoint, actor=actor(request))
        messages.success(request, _("Endpoint disabled: its events wait until it is enabled again."))
    return _back(endpoint)


def webhook_endpoint_test(request: HttpRequest, endpoint_id: str) -> HttpResponse:
    endpoint = or_404(access.get_endpoint(endpoint_id), "No such endpoint")
    if request.method != "POST":
        return _back(endpoint)
    actions.send_test_event(endpoint, actor=actor(request))
    messages.success(request, _("Test event queued: it is sent after the deliveries already queued."))
    return _back(endpoint)


def webhook_delivery_resend(request: HttpRequest, endpoint_id: str, position: str) -> HttpResponse:
    endpoint = or_404(access.get_endpoint(endpoint_id), "No such endpoint")
    delivery = or_404(access.get_delivery(endpoint.EndpointId, position), "No such delivery")
    if request.method != "POST":
        return _back(endpoint)
    actions.resend_delivery(endpoint, delivery, actor=actor(request))
    messages.success(request, _("Event %(id)s queued again.") % {"id": delivery.EventId})
    return _back(endpoint)


def _back(endpoint) -> HttpResponse:
    """To the endpoint's page: after a change, and for a GET of a change's URL (the buttons POST)."""
    return redirect("admin:staff_webhook_endpoint", endpoint_id=endpoint.EndpointId)
