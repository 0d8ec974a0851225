"""Turns DynamoDB outages into a friendly 503 page instead of a stack trace."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from core.dynamo.errors import describe_dynamodb_error, is_unavailable

log = logging.getLogger("billing")

RETRY_AFTER_SECONDS = 30


class DynamoDBUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_unavailable(exception):
            return None
        log.error("503 for %s %s: %s", request.method, request.path, describe_dynamodb_error(exception))
        body = render_to_string("503.html", {"retry_after": RETRY_AFTER_SECONDS}, request=request)
        response = HttpResponse(body, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
