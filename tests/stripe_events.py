"""Stripe events as the tests send them to ``/webhooks/stripe/``: the event in Stripe's
format (``previous_attributes`` and ``created`` when asked), its body signed the way Stripe
signs (``Stripe-Signature: t=<time>,v1=<HMAC-SHA256 of "<t>.<body>">``), and posted."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from billing.models import WebhookEvent
from devtools.localstripe import TEST_WEBHOOK_SECRET

SECRET = TEST_WEBHOOK_SECRET  # the one the stripe_gateway fixture sets (localstripe's, for its deliveries)


def signature(body: bytes, *, secret: str = SECRET, at: int | None = None) -> str:
    at = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def deliver(client: Any, event: dict | bytes, *, sign: str | None = None, **kwargs: Any) -> Any:
    """Post the event signed (``sign``: this header instead; "" for none)."""
    body = event if isinstance(event, bytes) else json.dumps(event).encode()
    header = sign if sign is not None else signature(body, **kwargs)
    return client.post("/webhooks/stripe/", data=body, content_type="application/json",
                       **({"HTTP_STRIPE_SIGNATURE": header} if header else {}))


def event(event_type: str, obj: dict, event_id: str = "evt_1", *, previous_attributes: dict | None = None,
          created: int | None = None) -> dict:
    data: dict[str, Any] = {"object": obj}
    if previous_attributes is not None:
        data["previous_attributes"] = previous_attributes
    return {"id": event_id, "object": "event", "type": event_type,
            "created": int(time.time()) if created is None else created, "data": data}


def stored(event_id: str) -> WebhookEvent | None:
    """The ``WEBHOOK#<id>`` item the site wrote for the event, if any."""
    try:
        return WebhookEvent.get(WebhookEvent.pk(event_id=event_id), WebhookEvent.sk(event_id=event_id))
    except WebhookEvent.DoesNotExist:
        return None
