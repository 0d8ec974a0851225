"""Telling staff that the sender disabled an endpoint: an e-mail through Django's mail
framework to the people who can act on it (active staff with the admin role's permission,
superusers among them) and to ``settings.ADMINS``; the staff page shows a banner too (the
endpoint's ``DisabledReason``). A mail failure is logged, never raised: the endpoint is
disabled whatever the mail server says."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db.models import Q

from billing.models import WebhookEndpoint

log = logging.getLogger("billing.webhooks")
PERMISSION = ("billing", "manage_integrations")  # core.staff.INTEGRATIONS: the admin role


def staff_addresses() -> list[str]:
    """Who hears about a disabled endpoint: the staff who may re-enable it, and ADMINS."""
    app_label, codename = PERMISSION
    with_perm = (Q(is_superuser=True) | Q(user_permissions__codename=codename,
                                           user_permissions__content_type__app_label=app_label)
                 | Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label))
    users = get_user_model().objects.filter(with_perm, is_active=True, is_staff=True).exclude(email="")
    addresses = {user.email for user in users.distinct()}
    addresses |= {address for _, address in getattr(settings, "ADMINS", [])}
    return sorted(addresses)


def tell_staff_endpoint_disabled(endpoint: WebhookEndpoint, *, first_failure: str, last_error: str) -> str:
    """E-mail staff; "" or the failure (logged)."""
    to = staff_addresses()
    if not to:
        log.warning("webhook endpoint %s disabled; no staff address to tell", endpoint.EndpointId)
        return "no address"
    subject = f"rpay: webhook endpoint {endpoint.Url} disabled after 3 days of failures"
    page = settings.SITE_URL.rstrip("/") + f"/admin/staff/webhooks/{endpoint.EndpointId}/"
    text = (f"The webhook endpoint {endpoint.Url} ({endpoint.EndpointId}) has failed every delivery since "
            f"{first_failure} and was disabled. Its events are kept: enable it again on {page} once the "
            f"merchant's receiver answers, and delivery resumes where it stopped.\n\nLast error: {last_error}\n")
    try:
        send_mail(subject, text, None, to)
    except Exception as error:  # noqa: BLE001 - the endpoint is disabled whatever the mail server says
        log.warning("webhook endpoint %s disabled; staff mail not sent: %s", endpoint.EndpointId, error)
        return str(error) or type(error).__name__
    return ""
