"""Logs a log shipper can read: with ``LOG_FORMAT=json`` every line is one JSON object
(time, level, logger, message, and the request id, batch run id, item and outcome where
there are some); text stays the default.

The request id comes from the ``X-Request-ID`` header a proxy sets (or is made here),
is echoed on the response, and rides in a context variable, like the batch run's id, so
every line logged while serving that request or running that batch carries it. Only the
record's message and these named fields are written: never a request's POST data or
headers, so a card number typed into a form cannot reach a log line through them.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("rpay_request_id", default=None)
run_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("rpay_run_id", default=None)

# Fields a caller may add with ``extra=`` (the batches: item and outcome).
EXTRA_FIELDS = ("item", "outcome", "kind")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class ContextFilter(logging.Filter):
    """Puts the request id and run id on every record (for either format)."""

    def filter(self, record: logging.LogRecord) -> bool:
        # django.request logs a response after the middleware has returned: its record
        # carries the request, which carries its id.
        record.request_id = request_id.get() or getattr(getattr(record, "request", None), "request_id", None)
        record.run_id = run_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in ("request_id", "run_id", *EXTRA_FIELDS):
            value = getattr(record, name, None)
            if value is not None:
                line[name] = str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class RequestIdMiddleware:
    """Gives each request an id (the proxy's ``X-Request-ID`` when it is a plain token)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        given = request.headers.get("X-Request-ID", "")
        rid = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        request.request_id = rid
        token = request_id.set(rid)
        try:
            response = self.get_response(request)
        finally:
            request_id.reset(token)
        response["X-Request-ID"] = rid
        return response


@contextmanager
def run_context(rid: str | None) -> Iterator[None]:
    """Every line logged inside carries this batch run's id (threads started inside copy it
    only when they copy the context: the run's workers do)."""
    token = run_id.set(rid)
    try:
        yield
    finally:
        run_id.reset(token)


def logging_config(log_format: str, level: str) -> dict:
    """Django's ``LOGGING`` for ``LOG_FORMAT`` (``text`` or ``json``)."""
    json_lines = log_format == "json"
    formatter = {"()": "core.ops.logs.JsonFormatter"} if json_lines else {"format": "%(message)s"}
    apps = {name: {"handlers": ["console"], "level": level} for name in ("billing", "core", "shop")}
    # Django's own loggers keep Django's defaults in text; in JSON they write JSON too.
    django = {"django": {"handlers": ["console"], "level": "WARNING", "propagate": False}} if json_lines else {}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "core.ops.logs.ContextFilter"}},
        "formatters": {"rpay": formatter},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "rpay", "filters": ["context"]}},
        "loggers": {**apps, **django},
    }
