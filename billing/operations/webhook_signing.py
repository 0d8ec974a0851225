"""The body and the Standard Webhooks headers of a delivery, signed with the
``standardwebhooks`` library (the spec's own reference implementation, so a receiver using
any of its libraries verifies what we send).

``webhook-id`` is the event's id, the same on every attempt and on a resend, so a receiver
can drop a repeat; ``webhook-timestamp`` is the attempt's time (a receiver refuses one more
than five minutes off); ``webhook-signature`` holds one ``v1,<base64>`` per secret that
signs: the endpoint's, and for 24 hours after a rotation the previous one beside it.

The sender (billing/batches/outbound/sender.py) signs every delivery with these; the
endpoints' actions (billing/actions/webhook_endpoints.py) make a new secret and the test
event's body with them.
"""

from __future__ import annotations

import base64
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # 256-bit HMAC-SHA256 keys (the spec asks for 24 to 64 bytes)


def new_secret() -> str:
    """A new signing secret as the spec writes it: ``whsec_`` and the key in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def event_body(*, event_id: str, event_type: str, created_at: str, data: Any) -> str:
    """The JSON a receiver gets: the spec's ``type``, ``timestamp`` and ``data`` (the object
    as the API shows it), and the event's ``id`` (also in ``webhook-id``)."""
    return json.dumps({"id": event_id, "type": event_type, "timestamp": created_at, "data": data},
                      separators=(",", ":"), sort_keys=True, default=str)


def signed_headers(body: str, *, message_id: str, at: datetime, signing_secrets: list[str]) -> dict[str, str]:
    """The three headers for ``body`` sent at ``at`` (each secret signs; the newest first)."""
    at = at.astimezone(UTC)
    signatures = " ".join(Webhook(secret).sign(message_id, at, body) for secret in signing_secrets)
    return {"webhook-id": message_id, "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signatures}
