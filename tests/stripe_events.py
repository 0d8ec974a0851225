"""Stripe events as the tests send them to ``/webhooks/stripe/``: the event in Stripe's
format (``previous_attributes`` and ``created`` when asked), its body signed the way Stripe
signs (``Stripe-Signature: t=<time>,v1=<HMAC-SHA256 of "<t>.<body>">``), and posted."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta
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


# An event has one ``created``, sent unchanged on every redelivery (the site keys it by it):
# the same id made twice by a test is the same event.
_CREATED: dict[str, int] = {}


def event(event_type: str, obj: dict, event_id: str = "evt_1", *, previous_attributes: dict | None = None,
          created: int | None = None) -> dict:
    data: dict[str, Any] = {"object": obj}
    if previous_attributes is not None:
        data["previous_attributes"] = previous_attributes
    if created is None:
        created = _CREATED.setdefault(event_id, int(time.time()))
    return {"id": event_id, "object": "event", "type": event_type, "created": created, "data": data}


def stored(event_id: str) -> WebhookEvent | None:
    """The item the site wrote for the event (keyed by its created day: today's or
    yesterday's, UTC, for the events these tests make now), if any."""
    from billing import access

    today = datetime.now(tz=UTC).date()
    for day in (today, today - timedelta(days=1)):
        for item in access.get_webhook_events(day):
            if item.EventId == event_id:
                return item
    return None
