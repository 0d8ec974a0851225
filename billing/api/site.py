"""The API at ``/api/v1/``: django-ninja (docs/API.md says why), its OpenAPI 3 document
at ``openapi.json`` and the Swagger UI page at ``docs`` (served from ninja's own static
files: the site's Content-Security-Policy allows nothing from elsewhere, and the page has
no inline script).

Every answer under ``/api/v1/`` is JSON: the routes' errors by billing/api/errors.py, an
unknown path by ``unknown_path`` and a wrong method by ``json_errors``; the API's texts are
English whatever the caller's Accept-Language. CSRF does not apply: no call is
authenticated by a cookie (ninja's views are exempt; a key is sent by the caller)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import URLPattern, URLResolver, path
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI

from billing.api import add_ons, items, meters, metrics, prices, seats, switching, upcoming, writes
from billing.api.errors import error_body, install_handlers

api = NinjaAPI(
    title="rpay API", version="v1", urls_namespace="api-v1",
    description=("The merchant's API of rpay's subscriptions, receipts, products, coupons and disputes. "
                 "Authenticate with `Authorization: Bearer <key>` (a key made by staff). Lists are cursor-paged "
                 "(`limit`, `cursor` = the previous page's `next_cursor`); writes take an `Idempotency-Key`. "
                 "Amounts are integers in the currency's minor units. Errors are "
                 '`{"error": {"type", "message", "param"}}`.'),
)
install_handlers(api)
# One router: the writes (billing/api/writes.py) are added to the reads' router, so that
# a path with a GET and a POST (/products) is one URL pattern.
api.add_router("", writes.router)
# Each capability's routes in a module of its own, mounted at the root as well.
for capability in (prices, items, meters, metrics, seats, add_ons, upcoming, switching):
    api.add_router("", capability.router)


def json_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """In English; a body-less refusal from beneath the routes (405 for a wrong method) as
    the API's JSON error."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with translation.override("en"):
            try:
                response = view(request, *args, **kwargs)
            except Http404:  # ninja's own root view ("/api/v1/") raises it
                return unknown_path(request, request.path.removeprefix("/api/v1/"))
        if response.status_code == 405 and not response.get("Content-Type", "").startswith("application/json"):
            allowed = response.get("Allow", "")
            json = JsonResponse(error_body(405, f"{request.method} is not allowed here (allowed: {allowed})."),
                                status=405)
            json["Allow"] = allowed
            return json
        return response

    return wrapped


@csrf_exempt
def unknown_path(request: HttpRequest, rest: str = "") -> JsonResponse:
    return JsonResponse(error_body(404, f"No such path: /api/v1/{rest}."), status=404)


def _wrapped(patterns: list[Any]) -> list[Any]:
    out: list[Any] = []
    for pattern in patterns:
        if isinstance(pattern, URLPattern):
            pattern.callback = json_errors(pattern.callback)
        elif isinstance(pattern, URLResolver):
            _wrapped(pattern.url_patterns)
        out.append(pattern)
    return out


def api_urls() -> list[Any]:
    """What rpay_site/urls.py mounts at ``api/v1/``: the API, then any other path as a JSON 404."""
    patterns, app_name, namespace = api.urls
    return [path("", (_wrapped(list(patterns)), app_name, namespace)),
            path("<path:rest>", unknown_path)]
