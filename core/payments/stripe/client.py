"""The Stripe client rpay talks through: one place for the API version, the retries and the
endpoint.

``stripe.StripeClient`` (not the library's module-level globals) so that two
configurations can live in one process (the tests run one against localstripe beside the
simulated gateway) and nothing else in the process can change ours.
"""

from __future__ import annotations

from typing import Any

import stripe
from django.conf import settings

from core.payments.stripe.http import KeepAliveClient

# The API version rpay is written and tested against. Stripe answers every request in the
# version it names, so an account upgraded in the dashboard does not change what rpay
# parses. Move it only with the library, after reading Stripe's changelog.
API_VERSION = "2026-10-28.endive"

# The library retries a request that failed on the network, a 409 (idempotency conflict),
# a 429 or a 5xx with the same Idempotency-Key, with backoff: safe for every request rpay
# makes (each create carries its key).
MAX_NETWORK_RETRIES = 2


def build_client(*, http_client: Any = None) -> stripe.StripeClient:
    """A client for ``settings.STRIPE_SECRET_KEY``, against ``STRIPE_API_BASE`` when set
    (localstripe in development and tests; unset in production: api.stripe.com), sending
    through ``http_client`` (a test's recorder) or else one pool of keep-alive connections
    shared by every thread (``http.KeepAliveClient``: why, there)."""
    base = {"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else None
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY,
        stripe_version=API_VERSION,
        max_network_retries=MAX_NETWORK_RETRIES,
        base_addresses=base or {},
        http_client=http_client or KeepAliveClient(),
    )
