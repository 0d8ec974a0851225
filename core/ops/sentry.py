"""Error reporting to Sentry (``SENTRY_DSN``; sentry-sdk with its Django integration).

Nothing a customer typed into a card form, no secret, no session and no e-mail address may
leave: the SDK sends no personal data (the SDK's default), and ``scrub`` runs on every event
before it is sent. It drops request bodies, cookies and credentials' headers, blanks
any field named like a secret (card number, CVC, password, token, key...) at any depth,
and replaces any run of 12 to 19 digits (spaces and dashes allowed) that passes the Luhn
check (a card number), and any e-mail address (the account models' reprs carry the
customer's), wherever they appear, in messages and local variables alike.
"""

from __future__ import annotations

import re
from typing import Any

from core.payments.gateway import luhn_valid, normalize_card_number

SCRUBBED = "[scrubbed]"
SECRET_NAMES = re.compile(r"card|cvc|cvv|pan\b|password|passwd|secret|token|api_?key|authorization|cookie|session"
                          r"|csrf|dsn|signature", re.I)
# 12-19 digits, possibly grouped by spaces or dashes: what a card number looks like.
CARD_LIKE = re.compile(r"(?<!\d)(?:\d[ -]?){11,18}\d(?!\d)")
# An e-mail address: a customer's is personal data, and the account's key (``ACC#...``)
# already tells the operator whose record it was.
EMAIL_LIKE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
DROPPED_REQUEST_PARTS = ("data", "cookies", "env")


def scrub_text(text: str) -> str:
    """``text`` with every card-number-like run that passes Luhn, and every e-mail address,
    replaced."""
    def hide(match: re.Match[str]) -> str:
        return SCRUBBED if luhn_valid(normalize_card_number(match.group(0))) else match.group(0)
    return EMAIL_LIKE.sub(SCRUBBED, CARD_LIKE.sub(hide, text))


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {k: SCRUBBED if isinstance(k, str) and SECRET_NAMES.search(k) else _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_scrub(v) for v in value)
    return value


def scrub(event: dict[str, Any], hint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sentry's ``before_send``: the event without card data, secrets or sessions."""
    request = event.get("request")
    if isinstance(request, dict):
        for part in DROPPED_REQUEST_PARTS:
            request.pop(part, None)
        request.pop("query_string", None)
    return _scrub(event)


def init_sentry(dsn: str, *, environment: str, transport: Any = None) -> None:
    """Turn error reporting on (settings, when ``SENTRY_DSN`` is set); ``transport``:
    tests record the events instead of sending them."""
    import sentry_sdk
    from sentry_sdk.integrations.django import DjangoIntegration

    # No personal data: neither ``send_default_pii`` (deprecated) nor ``data_collection`` is
    # given, and the SDK then collects none (tests/core/test_ops.py reads the events it sends).
    sentry_sdk.init(dsn=dsn, environment=environment, integrations=[DjangoIntegration()],
                    before_send=scrub, max_request_body_size="never",
                    include_local_variables=True, transport=transport)
