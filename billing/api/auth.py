"""``Authorization: Bearer <key>``: the key is looked up by its hash (one strongly
consistent GetItem, so a revoked key is refused from the next call), counted against the
key's rate limit (one conditional UpdateItem) and its last use recorded at most once a
minute. A ``read`` key may call the reads; a ``write`` key everything."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja.security import HttpBearer

from billing import access
from billing.api.errors import ApiError
from billing.models import ApiKey, ApiKeyScope

MAX_KEY_LENGTH = 200  # far above a real key's; anything longer is not one


class BearerKey(HttpBearer):
    """Any live key (the reads)."""

    write = False

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey:
        token = token.strip()
        key = access.get_api_key(token) if token and len(token) <= MAX_KEY_LENGTH else None
        if key is None or key.revoked:
            raise ApiError(401, "That API key is not valid (unknown or revoked).",
                           headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        wait = access.count_api_call(key, limit=settings.API_RATE_LIMIT,
                                     window_seconds=settings.API_RATE_WINDOW_SECONDS)
        if wait is not None:
            raise ApiError(429, f"Too many calls with this key; try again in {wait} s.",
                           headers={"Retry-After": str(wait)})
        if self.write and key.Scope != ApiKeyScope.WRITE:
            raise ApiError(403, "This key may only read; a write key is needed for this call.")
        access.touch_api_key(key)
        return key


class WriteKey(BearerKey):
    """A ``write`` key (every change)."""

    write = True


read_key = BearerKey()
write_key = WriteKey()


def key_of(request: HttpRequest) -> ApiKey:
    return request.auth  # type: ignore[attr-defined]


def actor_of(request: HttpRequest) -> str:
    """Who made a change, as the audit events record it: the key's name."""
    return f"api:{key_of(request).Name}"
