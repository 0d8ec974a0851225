"""Outbound webhook endpoints, by staff (billing/staff/webhook_endpoints.py) and by the API
(``POST /api/v1/webhook_endpoints``): register one (its secret returned once), rotate its
secret, disable and enable it, resend a delivery, send a test event.

A URL is checked by the SSRF guard (core/net) when registered, and again by the sender
before each attempt (a name's addresses may change). ``UnsafeURL`` (a ``ValueError``)
says why a URL is refused, for a form's or the API's field error.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings

from billing import access
from billing.models import EndpointStatus, WebhookDelivery, WebhookEndpoint
from billing.operations.webhook_signing import event_body, new_secret
from billing.rules.webhook_retries import TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES
from core.net import UnsafeURL, check_url, resolve_target

# Changes to endpoints belong to no customer: their audit events are filed in the
# pseudo-account partition ``ACC#WEBHOOKS`` (as the catalogue's are in ``ACC#CATALOG``).
AUDIT_ACCOUNT = "WEBHOOKS"
SECRET_OVERLAP = timedelta(hours=24)  # the old secret still signs beside the new one
MAX_DESCRIPTION = 200


def check_endpoint_url(url: str) -> str:
    """The URL as it will be stored, or ``UnsafeURL``: https only, and a name resolving to
    public addresses only, unless ``WEBHOOKS_ALLOW_PRIVATE_URLS``."""
    allow = settings.WEBHOOKS_ALLOW_PRIVATE_URLS
    target = check_url(url.strip() if isinstance(url, str) else url, allow_private=allow)
    if not allow:
        resolve_target(target, allow_private=False)
    return url.strip()


def check_event_types(event_types: list[str] | None) -> list[str] | None:
    """The types asked for (None or empty: every type); ``ValueError`` names an unknown one."""
    if not event_types:
        return None
    unknown = sorted(set(event_types) - set(WEBHOOK_EVENT_TYPES))
    if unknown:
        raise ValueError(f"unknown event type(s): {', '.join(unknown)}")
    return sorted(set(event_types))


def create_endpoint(url: str, event_types: list[str] | None, *, actor: str,
                    description: str | None = None) -> tuple[WebhookEndpoint, str]:
    """A new endpoint hearing the events made from now on, and its secret (shown once).
    ``UnsafeURL`` for a refused URL, ``ValueError`` for an unknown event type."""
    checked = check_endpoint_url(url)
    types = check_event_types(event_types)
    secret = new_secret()
    endpoint = access.create_webhook_endpoint(checked, types, secret, actor=actor,
                                              description=(description or "").strip()[:MAX_DESCRIPTION] or None)
    _audit(endpoint, "webhook_endpoint.created", actor, after={"Url": checked, "EventTypes": types})
    return endpoint, secret


def _audit(endpoint: WebhookEndpoint, action: str, actor: str, **fields: object) -> None:
    """The change's audit event (never the secret), after the change it records."""
    access.record_event(AUDIT_ACCOUNT, actor=actor, action=action, subject=endpoint.EndpointId, **fields)


def rotate_secret(endpoint: WebhookEndpoint, *, actor: str) -> str:
    """A new secret (returned, shown once); the old one signs beside it for 24 hours."""
    secret = new_secret()
    access.rotate_endpoint_secret(endpoint, secret, overlap=SECRET_OVERLAP)
    _audit(endpoint, "webhook_endpoint.secret_rotated", actor)
    return secret


def disable_endpoint(endpoint: WebhookEndpoint, *, actor: str) -> WebhookEndpoint:
    """No more deliveries; its events wait (fanned out again when it is enabled)."""
    access.set_endpoint_status(endpoint, EndpointStatus.DISABLED, reason="staff")
    _audit(endpoint, "webhook_endpoint.disabled", actor)
    return endpoint


def enable_endpoint(endpoint: WebhookEndpoint, *, actor: str) -> WebhookEndpoint:
    """Deliveries resume where they stopped: the events made meanwhile are sent, oldest first."""
    access.set_endpoint_status(endpoint, EndpointStatus.ENABLED, reason=None)
    _audit(endpoint, "webhook_endpoint.enabled", actor)
    return endpoint


def resend_delivery(endpoint: WebhookEndpoint, delivery: WebhookDelivery, *, actor: str) -> WebhookDelivery:
    """The same event (same ``webhook-id`` and body) once more, queued after everything queued."""
    queued = access.queue_extra_delivery(endpoint.EndpointId, kind="resend", event_id=delivery.EventId,
                                         event_type=delivery.EventType, payload=delivery.Payload)
    _audit(endpoint, "webhook_endpoint.resend", actor, note=delivery.EventId)
    return queued


def send_test_event(endpoint: WebhookEndpoint, *, actor: str) -> WebhookDelivery:
    """A ``webhook.test`` event for this endpoint only, queued after everything queued."""
    now = access.utc_now()
    event_id = f"evt_test_{now.strftime('%Y%m%dT%H%M%S%f')}Z_{secrets.token_hex(4)}"
    body = event_body(event_id=event_id, event_type=TEST_EVENT_TYPE, created_at=access.iso_time(now),
                      data={"object": "test", "message": "A test event sent by rpay staff.", "sent_by": actor})
    queued = access.queue_extra_delivery(endpoint.EndpointId, kind="test", event_id=event_id,
                                         event_type=TEST_EVENT_TYPE, payload=body)
    _audit(endpoint, "webhook_endpoint.test_event", actor, note=event_id)
    return queued


__all__ = ["UnsafeURL", "check_endpoint_url", "check_event_types", "create_endpoint", "disable_endpoint",
           "enable_endpoint", "resend_delivery", "rotate_secret", "send_test_event"]
