"""The API's one error shape, ``{"error": {"type", "message", "param"}}``, for every
refusal: bad input (400), no or unknown key (401), a key not allowed the call (403),
nothing there (404, also a path id that cannot be one), a conflict (409), a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413), too many calls (429). Never an HTML page, never a
stack trace: an unexpected failure is a JSON 500 that names nothing inside."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from core.dynamo.errors import is_unavailable

log = logging.getLogger(__name__)

# The error types, by status (Stripe's names where it has one).
TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
         404: "not_found", 405: "invalid_request_error", 409: "conflict", 413: "invalid_request_error",
         429: "rate_limit_error",
         500: "api_error", 503: "api_error"}


class ApiError(Exception):
    """A refusal the API answers with its status and error body."""

    def __init__(self, status: int, message: str, *, param: str | None = None, type: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.type = type or TYPES.get(status, "invalid_request_error")
        self.headers = headers or {}


def not_found(what: str, param: str | None = None) -> ApiError:
    return ApiError(404, f"No such {what}.", param=param)


T = TypeVar("T")


def found(value: T | None, what: str, param: str) -> T:
    """``value``, or the 404 of the ``what`` that ``param`` names when there is none."""
    if value is None:
        raise not_found(what, param)
    return value


def error_body(status: int, message: str, *, param: str | None = None, type: str | None = None) -> dict[str, Any]:
    return {"error": {"type": type or TYPES.get(status, "invalid_request_error"), "message": message, "param": param}}


def error_response(error: ApiError) -> JsonResponse:
    response = JsonResponse(error_body(error.status, error.message, param=error.param, type=error.type),
                            status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response


def _param(location: Any) -> str | None:
    """A validation error's field, as the caller named it (``body.amount`` → ``amount``)."""
    parts = [str(p) for p in location or () if p not in ("body", "query", "path", "header", "payload")]
    return ".".join(parts) or None


def install_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, exc: ApiError) -> JsonResponse:
        return error_response(exc)

    @api.exception_handler(ValidationError)
    def invalid(request: HttpRequest, exc: ValidationError) -> JsonResponse:
        first = exc.errors[0] if exc.errors else {}
        message = str(first.get("msg") or "Invalid request.")
        param = _param(first.get("loc"))
        # A path whose id cannot be one names nothing: like any unknown path, a 404.
        status = 404 if tuple(first.get("loc") or ())[:1] == ("path",) else 400
        return error_response(ApiError(status, f"{param}: {message}" if param else message, param=param))

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, exc: RequestDataTooBig) -> JsonResponse:
        # Django refuses to read a body over DATA_UPLOAD_MAX_MEMORY_SIZE: the caller's doing.
        return error_response(ApiError(413, f"The request body is over the limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} "
                                            "bytes."))

    @api.exception_handler(SuspiciousOperation)
    def refused_input(request: HttpRequest, exc: SuspiciousOperation) -> JsonResponse:
        # Django's other refusals of a request as sent (too many form fields...): bad input.
        return error_response(ApiError(400, "The request was refused as malformed."))

    @api.exception_handler(AuthenticationError)
    def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> JsonResponse:
        return error_response(ApiError(401, "An API key is needed: Authorization: Bearer <key>.",
                                       headers={"WWW-Authenticate": "Bearer"}))

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> JsonResponse:
        return error_response(ApiError(exc.status_code, str(exc)))

    @api.exception_handler(Http404)
    def missing(request: HttpRequest, exc: Http404) -> JsonResponse:
        return error_response(ApiError(404, "Not found."))

    @api.exception_handler(Exception)
    def unexpected(request: HttpRequest, exc: Exception) -> JsonResponse:
        if is_unavailable(exc):
            return error_response(ApiError(503, "The service is briefly unavailable; try again shortly.",
                                           headers={"Retry-After": "5"}))
        log.exception("API call failed: %s %s", request.method, request.path)
        return error_response(ApiError(500, "Something went wrong on our side. Try again; a write with the same Idempotency-Key is safe to repeat."))
