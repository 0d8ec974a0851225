"""The REST API's own items (docs/API.md): its keys, the per-key rate counter and the
``Idempotency-Key`` records. Every call of the API reads its key with one GetItem (by
the secret's hash, strongly consistent, so a revoked key is refused at once) and counts
itself with one conditional UpdateItem.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from pynamodb.exceptions import DoesNotExist, PutError

from billing.access._common import (
    absent_if_invalid,
    is_conditional_failure,
    iso_now,
    refused_as,
    update_if,
    utc_now,
)
from billing.exceptions import AlreadyExists, ConditionFailed
from billing.models import ApiIdempotency, ApiKey, ApiKeyScope, ApiRateWindow

# What every key starts with, so a leaked one is recognisable (secret scanners, logs).
KEY_PREFIX = "rpay_"
KEY_ID_LENGTH = 12
# The last use is written when it is older than this: a key in steady use costs one
# write a minute, not one per call.
LAST_USE_EVERY = timedelta(minutes=1)
IDEMPOTENCY_HOURS = 24
# A claim still "running" after this was left by a process that died mid-request (no web
# request lives this long: gunicorn's timeout is far shorter): the key may be used again,
# rather than answer "in progress" for the rest of its 24 hours.
RUNNING_AT_MOST = timedelta(minutes=10)


def key_hash(secret: str) -> str:
    """SHA-256 of the key. A key is 256 random bits, so a fast hash is right: there is no
    dictionary to guess from (a slow password hash protects low-entropy secrets), and the
    look-up stays one GetItem by the hash."""
    return hashlib.sha256(secret.encode()).hexdigest()


def create_api_key(name: str, scope: ApiKeyScope, *, actor: str) -> tuple[ApiKey, str]:
    """A new key: the item (its hash only) and the key itself, to be shown once."""
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    digest = key_hash(secret)
    key = ApiKey(ApiKey.pk(), ApiKey.sk(key_hash=digest), KeyId=digest[:KEY_ID_LENGTH], Name=name,
                 Scope=ApiKeyScope(scope).value, Prefix=secret[:len(KEY_PREFIX) + 4], CreatedAt=iso_now(),
                 CreatedBy=actor)
    with refused_as(AlreadyExists, key.SK):
        key.save(condition=ApiKey.SK.does_not_exist())
    return key, secret


@absent_if_invalid()
def get_api_key(secret: str) -> ApiKey | None:
    """The key a request presents, revoked or not: one strongly consistent GetItem."""
    try:
        return ApiKey.get(ApiKey.pk(), ApiKey.sk(key_hash=key_hash(secret)), consistent_read=True)
    except DoesNotExist:
        return None


def list_api_keys() -> list[ApiKey]:
    """Every key, revoked ones too (the staff page): one Query."""
    return list(ApiKey.query(ApiKey.pk(), ApiKey.SK.startswith(ApiKey.sk_template.prefix)))


def find_api_key(key_id: str) -> ApiKey | None:
    """The key whose id (the hash's first characters) is ``key_id``: one Query."""
    if len(key_id) != KEY_ID_LENGTH or not all(c in "0123456789abcdef" for c in key_id):
        return None
    for key in ApiKey.query(ApiKey.pk(), ApiKey.SK.startswith(ApiKey.sk(key_hash=key_id))):
        return key
    return None


def revoke_api_key(key: ApiKey, *, actor: str) -> ApiKey:
    """Refused from the next call on (the look-up reads strongly consistent)."""
    if not key.revoked:
        key.update(actions=[ApiKey.RevokedAt.set(iso_now()), ApiKey.RevokedBy.set(actor)],
                   condition=ApiKey.SK.exists())
    return key


def touch_api_key(key: ApiKey, now: datetime | None = None) -> None:
    """Record the key's use, at most once a minute (a conditional UpdateItem, skipped when
    the last use read is recent enough: most calls write nothing here)."""
    now = now or utc_now()
    last = key.LastUsedAt
    cutoff = (now - LAST_USE_EVERY).isoformat(timespec="seconds")
    if last and last > cutoff:
        return
    # Refused: another call wrote it meanwhile, as good.
    update_if(key, [ApiKey.LastUsedAt.set(now.isoformat(timespec="seconds"))],
              ApiKey.SK.exists() & (ApiKey.LastUsedAt.does_not_exist() | (ApiKey.LastUsedAt < cutoff)))


def count_api_call(key: ApiKey, *, limit: int, window_seconds: int, now: datetime | None = None) -> int | None:
    """Count one call in the key's current fixed window: None when allowed, else the
    seconds until the next window (one conditional UpdateItem either way)."""
    now = now or utc_now()
    epoch = int(now.timestamp())
    window = epoch - epoch % window_seconds
    item = ApiRateWindow(ApiRateWindow.pk(key_id=key.KeyId, window=window), ApiRateWindow.sk(key_id=key.KeyId, window=window))
    if update_if(item, [ApiRateWindow.Calls.add(1), ApiRateWindow.EntityType.set(ApiRateWindow),
                        ApiRateWindow.TTL.set(datetime.fromtimestamp(window + 2 * window_seconds, tz=now.tzinfo))],
                 ApiRateWindow.Calls.does_not_exist() | (ApiRateWindow.Calls < limit)):
        return None
    return max(1, window + window_seconds - epoch)


# --- Idempotency-Key ------------------------------------------------------------------


def begin_idempotent(key: ApiKey, idempotency_key: str, fingerprint: str,
                     now: datetime | None = None) -> ApiIdempotency | None:
    """Claim ``idempotency_key`` for this request: None when claimed (the write may run),
    else the record already there (running, or done with its answer). A record past its
    24 hours (DynamoDB's TTL deletes it lazily), or left running by a dead process
    (``RUNNING_AT_MOST``), is claimed again."""
    now = now or utc_now()
    expires = now + timedelta(hours=IDEMPOTENCY_HOURS)
    pk = ApiIdempotency.pk(key_id=key.KeyId, idempotency_key=idempotency_key)
    record = ApiIdempotency(pk, pk, Fingerprint=fingerprint, State="running", StartedAt=now.isoformat(),
                            ExpiresAt=int(expires.timestamp()), TTL=expires)
    abandoned = (now - RUNNING_AT_MOST).isoformat()
    try:
        record.save(condition=ApiIdempotency.PK.does_not_exist() | (ApiIdempotency.ExpiresAt < int(now.timestamp()))
                    | ((ApiIdempotency.State == "running") & (ApiIdempotency.StartedAt < abandoned)))
        return None
    except PutError as error:
        if not is_conditional_failure(error):
            raise
    try:
        return ApiIdempotency.get(pk, pk, consistent_read=True)
    except DoesNotExist:  # released meanwhile: the caller may say "try again"
        return ApiIdempotency(pk, pk, Fingerprint=fingerprint, State="running", StartedAt=now.isoformat(),
                              ExpiresAt=int(expires.timestamp()))


def finish_idempotent(key: ApiKey, idempotency_key: str, status: int, body: str) -> None:
    """Keep the write's answer for the repeats."""
    pk = ApiIdempotency.pk(key_id=key.KeyId, idempotency_key=idempotency_key)
    with refused_as(ConditionFailed, pk):
        ApiIdempotency(pk, pk).update(actions=[
            ApiIdempotency.State.set("done"), ApiIdempotency.ResponseStatus.set(status),
            ApiIdempotency.ResponseBody.set(body)], condition=ApiIdempotency.PK.exists())


def release_idempotent(key: ApiKey, idempotency_key: str) -> None:
    """Forget a claim whose write failed unexpectedly, so that a retry runs it."""
    pk = ApiIdempotency.pk(key_id=key.KeyId, idempotency_key=idempotency_key)
    ApiIdempotency(pk, pk).delete()
