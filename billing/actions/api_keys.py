"""API keys (docs/API.md): made and revoked by an admin (the staff page or ``manage.py
api_keys``), each with its audit event in the pseudo-account ``ACC#APIKEYS``."""

from __future__ import annotations

from billing import access
from billing.models import ApiKey, ApiKeyScope

# Key changes belong to no customer: their audit events are filed here.
API_KEY_EVENTS_ACCOUNT = "APIKEYS"
KEY_CREATED = "staff.create_api_key"
KEY_REVOKED = "staff.revoke_api_key"


def _snapshot(key: ApiKey) -> dict:
    return {"KeyId": key.KeyId, "Name": key.Name, "Scope": key.Scope, "Prefix": key.Prefix,
            **({"RevokedAt": key.RevokedAt} if key.RevokedAt else {})}


def create_key(name: str, scope: ApiKeyScope | str, *, actor: str) -> tuple[ApiKey, str]:
    """A new key and its secret (shown once: only its hash is kept)."""
    key, secret = access.create_api_key(name.strip(), ApiKeyScope(scope), actor=actor)
    access.record_event(API_KEY_EVENTS_ACCOUNT, actor=actor, action=KEY_CREATED, subject=key.KeyId,
                        after=_snapshot(key))
    return key, secret


def revoke_key(key: ApiKey, *, actor: str) -> ApiKey:
    """Refused from the next call on."""
    before = _snapshot(key)
    access.revoke_api_key(key, actor=actor)
    access.record_event(API_KEY_EVENTS_ACCOUNT, actor=actor, action=KEY_REVOKED, subject=key.KeyId,
                        before=before, after=_snapshot(key))
    return key
