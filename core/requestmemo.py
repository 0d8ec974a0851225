"""Reads made once per web request: a value every part of a page needs (the seller's tax
profile, for each amount it shows) is read at its first use and shared by the rest of
the same request, never by another one (so no page shows what another request read, and
the request counts the tests assert stay exact). Outside a request (batches, commands)
nothing is kept: each caller reads, or passes what it read along."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse

T = TypeVar("T")

_memo: ContextVar[dict[str, Any] | None] = ContextVar("request_memo", default=None)


def once_per_request(key: str, read: Callable[[], T]) -> T:
    """``read()``'s value, read at most once in the current request."""
    memo = _memo.get()
    if memo is None:
        return read()
    if key not in memo:
        memo[key] = read()
    return memo[key]


def forget(key: str) -> None:
    """After a write of what ``key`` holds: the rest of the request reads it anew."""
    memo = _memo.get()
    if memo is not None:
        memo.pop(key, None)


class RequestMemoMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _memo.set({})
        try:
            return self.get_response(request)
        finally:
            _memo.reset(token)
