"""``/healthz`` and ``/readyz``: the probes of a load balancer or Kubernetes.

``/healthz`` says the process answers (nothing is read). ``/readyz`` says it can serve:
every registered table is ACTIVE on the engine (one DescribeTable each) and Django's
database answers; 200, or 503 with a small JSON body naming what failed. The answer is
cached for ``READINESS_CACHE_SECONDS`` so that probes every second cost one request per
table every few seconds. Neither needs a log-in or shows any data.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from core.dynamo.errors import is_unavailable
from core.dynamo.table import registered

READINESS_CACHE_SECONDS = 5.0
_cache: dict[str, Any] = {"at": -1e9, "failed": []}
_lock = threading.Lock()


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def failed_checks() -> list[str]:
    """What is not ready, one short string each ([] when everything is)."""
    failed = []
    for table in registered():
        name = table.base.Meta.table_name
        try:
            status = table.base.describe_table().get("TableStatus")
        except Exception as error:  # noqa: BLE001 - named in the answer, never raised
            failed.append(f"dynamodb {name}: {'unavailable' if is_unavailable(error) else 'error'}")
            continue
        if status != "ACTIVE":
            failed.append(f"dynamodb {name}: table is {status}")
    for alias in connections:
        try:
            connections[alias].ensure_connection()
            with connections[alias].cursor() as cursor:
                cursor.execute("SELECT 1")
        except Exception as error:  # noqa: BLE001
            failed.append(f"database {alias}: {type(error).__name__}")
    return failed


def readiness(now: float | None = None) -> list[str]:
    """``failed_checks``, at most once per ``READINESS_CACHE_SECONDS``."""
    now = time.monotonic() if now is None else now
    with _lock:
        if now - _cache["at"] >= READINESS_CACHE_SECONDS:
            _cache["failed"], _cache["at"] = failed_checks(), now
        return list(_cache["failed"])


def forget_readiness() -> None:
    """The next probe checks again (tests)."""
    with _lock:
        _cache["at"] = -1e9


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    failed = readiness()
    if failed:
        return JsonResponse({"status": "unavailable", "failed": failed}, status=503)
    return JsonResponse({"status": "ok"})


class OpsEndpointsMiddleware:
    """Answers ``/healthz``, ``/readyz`` and ``/metrics`` first in the middleware stack, before
    the host check, the HTTPS redirect, sessions and CSRF: a kubelet probes a pod by its IP
    over plain HTTP, and a redirect would count as healthy. ``/metrics`` checks its own
    access (core/ops/metrics.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from core.ops.metrics import metrics

        endpoint = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics}.get(request.path_info)
        return endpoint(request) if endpoint else self.get_response(request)
