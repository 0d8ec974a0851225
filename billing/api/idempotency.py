"""``Idempotency-Key`` on the writes (Stripe's rule): the same key and the same request
(method, path and body) within 24 hours gets the first answer again, status and body,
without running the write twice; the same key with another request is a 409; a repeat
while the first is still running is a 409 "in progress". The claim is one conditional
PutItem before the write runs, so of two concurrent requests exactly one runs.
Without the header a write simply runs (as at Stripe)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse

from billing import access
from billing.api.auth import key_of
from billing.api.errors import ApiError, error_response

HEADER = "Idempotency-Key"
MAX_LENGTH = 255


def fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256()
    for part in (request.method or "", request.path):
        digest.update(part.encode() + b"\n")
    digest.update(request.body)
    return digest.hexdigest()


def _key(request: HttpRequest) -> str | None:
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    if not 0 < len(raw) <= MAX_LENGTH or not raw.isprintable():
        raise ApiError(400, f"The {HEADER} header must be 1-{MAX_LENGTH} printable characters.", param=HEADER)
    # Stored by its hash: any printable text the caller chose fits in the item's key.
    return hashlib.sha256(raw.encode()).hexdigest()


def replay(status: int, body: str) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type="application/json")
    response["Idempotent-Replayed"] = "true"
    return response


def idempotent(write: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Run ``write`` at most once per Idempotency-Key; its answers below 500 are kept."""

    @wraps(write)
    def once(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        idem = _key(request)
        if idem is None:
            return write(request, *args, **kwargs)
        key = key_of(request)
        print_ = fingerprint(request)
        found = access.begin_idempotent(key, idem, print_)
        if found is not None:
            if found.Fingerprint != print_:
                raise ApiError(409, f"This {HEADER} was used with another request.", param=HEADER,
                               type="idempotency_error")
            if found.State != "done":
                raise ApiError(409, f"A request with this {HEADER} is still in progress.", param=HEADER,
                               type="idempotency_error")
            return replay(int(found.ResponseStatus), found.ResponseBody or "")
        try:
            try:
                response = write(request, *args, **kwargs)
            except ApiError as refused:
                response = error_response(refused)
        except BaseException:
            access.release_idempotent(key, idem)  # nothing answered: a retry may run it
            raise
        if response.status_code >= 500:
            access.release_idempotent(key, idem)
        else:
            access.finish_idempotent(key, idem, response.status_code, response.content.decode())
        return response

    return once
