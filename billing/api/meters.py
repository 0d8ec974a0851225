"""Meters and their usage events (docs/USAGE.md): ``POST /meter_events`` counts each event
exactly once (one TransactWriteItems per event, billing/access/usage.py).

A batch (``{"events": [...]}``, at most 100) answers each event on its own, synchronously:
accepted, duplicate or refused with its reason and field. (Stripe's v2 meter event streams
take a batch and report refusals later, asynchronously; here the answer says at once, so a
sender knows which events to fix and which to send again.) The body is parsed here, not by
the schema: one event's bad value must not refuse the other 99, and numbers are read as
``Decimal`` (never through a float)."""

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from ninja import Query, Router, Schema
from pydantic import Field

from billing.access import usage as metered
from billing.actions import meters as meter_actions
from billing.api.auth import actor_of, read_key, write_key
from billing.api.errors import ApiError, error_body, found
from billing.api.idempotency import idempotent
from billing.api.reads import ERRORS, account_or_404
from billing.api.schemas import MAX_WHOLE, KeyId
from billing.api.writes import IDEMPOTENCY_DOC, WRITE_ERRORS
from billing.exceptions import AlreadyExists
from billing.models import Meter, MeterAggregation
from billing.rules.usage import MAX_BATCH, EventRefused
from core.clock import billing_today

router = Router(tags=["meters"])


class MeterIn(Schema):
    event_name: str = Field(..., max_length=100, description="What the events (and a metered price) name the meter by.")
    name: str = Field(..., max_length=200)
    aggregation: MeterAggregation = Field(..., description="count, sum, max, unique_count or last, over a period.")


class MeterOut(Schema):
    object: str
    event_name: str
    name: str
    aggregation: str


class UsageQuery(Schema):
    customer: KeyId
    from_: date | None = Field(None, alias="from", description="The first day, in the billing time zone (default: the 1st of this month).")
    to: date | None = Field(None, description="The day after the last (default: tomorrow: usage so far).")


EVENT_FIELDS = {
    "event_name": {"type": "string", "maxLength": 100},
    "customer": {"type": "string", "description": "The customer's id (the account)."},
    "identifier": {"type": "string", "maxLength": 100,
                   "description": "Your id of the event: a repeat within 35 days is counted once."},
    "value": {"description": "A number (or numeric text), zero or more, at most 6 decimals; "
                             "text for a unique_count meter; optional for count."},
    "timestamp": {"type": "integer", "minimum": 0, "maximum": MAX_WHOLE,
                  "description": "Unix seconds: up to 35 days old, 5 minutes ahead (default: now). "
                                 "The event counts on its calendar day in the billing time zone."},
}
EVENTS_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": {"oneOf": [
    {"type": "object", "properties": EVENT_FIELDS, "required": ["event_name", "customer", "identifier"]},
    {"type": "object", "properties": {"events": {"type": "array", "maxItems": MAX_BATCH,
                                                 "items": {"type": "object", "properties": EVENT_FIELDS}}},
     "required": ["events"]},
]}}}}}


def meter_object(meter: Meter) -> dict[str, Any]:
    return {"object": "meter", "event_name": meter.EventName, "name": meter.Name, "aggregation": meter.Aggregation,
            "created": meter.CreatedAt}


def number(value: int | Decimal) -> int | float | str:
    """A usage figure in JSON: a whole number as one, a fraction as exact text."""
    if isinstance(value, int) or value == value.to_integral_value():
        return int(value)
    return str(value.normalize())


def write(path: str, status: int = 200, **options: Any) -> Callable:
    """A POST of this router: a write key, run at most once per Idempotency-Key."""

    def decorate(view: Callable[..., JsonResponse]) -> Callable[..., JsonResponse]:
        extra = {**IDEMPOTENCY_DOC, **options.pop("openapi_extra", {})}
        return router.post(path, response={status: Any, **WRITE_ERRORS}, auth=write_key, openapi_extra=extra,
                           **options)(idempotent(view))

    return decorate


# --- meters --------------------------------------------------------------------------------


@router.get("/meters", response={200: Any, **ERRORS}, summary="The meters", auth=read_key)
def list_meters(request: HttpRequest) -> JsonResponse:
    # Meters are few, in one partition: one Query, one page.
    return JsonResponse({"object": "list", "data": [meter_object(m) for m in metered.list_meters()],
                         "has_more": False, "next_cursor": None})


@write("/meters", status=201, summary="Create a meter")
def create_meter(request: HttpRequest, body: MeterIn) -> JsonResponse:
    try:
        meter = meter_actions.add_meter(body.event_name, body.name, body.aggregation, actor=actor_of(request))
    except EventRefused as refused:
        raise ApiError(400, refused.message, param=refused.param) from None
    except AlreadyExists:
        raise ApiError(409, f"A meter {body.event_name} exists already.", param="event_name") from None
    return JsonResponse(meter_object(meter), status=201)


@router.get("/meters/{event_name}/usage", response={200: Any, **ERRORS}, summary="A customer's usage of a meter",
            auth=read_key)
def usage(request: HttpRequest, event_name: KeyId, query: Query[UsageQuery]) -> JsonResponse:
    """Over the billing days ``[from, to)`` (``BILLING_TIMEZONE``'s, as events are counted): by default this month so far. The meter's GetItem,
    the customer's GetItem, one Query (unique_count: of its value markers)."""
    meter = found(metered.get_meter(event_name), "meter", "event_name")
    account = account_or_404(query.customer)
    today = billing_today(settings.BILLING_TIMEZONE)
    start = query.from_ or today.replace(day=1)
    end = query.to or today + timedelta(days=1)
    if end <= start or (end - start).days > 366:
        raise ApiError(400, "to is after from, at most 366 days later.", param="to")
    used = metered.usage_of(meter, account.account_id, start, end)
    return JsonResponse({"object": "meter_usage", "event_name": meter.EventName, "customer": account.account_id,
                         "aggregation": meter.Aggregation, "from": start.isoformat(), "to": end.isoformat(),
                         "value": number(used)})


# --- usage events --------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def parsed_body(request: HttpRequest) -> Any:
    """The JSON body, its numbers as ``Decimal`` (exact; a 5,000-digit integer is no
    trouble), NaN and Infinity refused."""
    try:
        return json.loads(request.body, parse_float=Decimal, parse_int=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise ApiError(400, "The body is not valid JSON (NaN and Infinity are not numbers).") from None


def _one(event: Any, meters: dict[str, Meter | None], now: datetime) -> dict[str, Any]:
    """One event: its answer (accepted or duplicate), or ``EventRefused``."""
    if not isinstance(event, dict):
        raise EventRefused("invalid_event", None, "An event is a JSON object.")
    name = event.get("event_name")
    if not isinstance(name, str) or not name:
        raise EventRefused("missing_event_name", "event_name", "event_name is required.")
    if name not in meters:
        meters[name] = metered.get_meter(name) if len(name) <= 100 else None
    meter = meters[name]
    if meter is None:
        raise EventRefused("unknown_event_name", "event_name", f"No meter counts events named {name[:100]!r}.")
    status = meter_actions.record_usage(meter, customer=event.get("customer"), identifier=event.get("identifier"),
                                        value=event.get("value"), timestamp=event.get("timestamp"), now=now)
    return {"object": "meter_event", "status": str(status), "event_name": name, "customer": event["customer"],
            "identifier": event["identifier"]}


@write("/meter_events", summary="Record usage events (one, or a batch of up to 100)", openapi_extra=EVENTS_BODY)
def create_meter_events(request: HttpRequest) -> JsonResponse:
    """One event: 200 with ``status`` ``accepted`` or ``duplicate`` (counted before: not
    again), or a 400 whose ``type`` is the reason and ``param`` the field. A batch
    ``{"events": [...]}``: 200 with one answer per event, in order (``accepted``,
    ``duplicate`` or ``refused`` with its error). One TransactWriteItems per event."""
    body = parsed_body(request)
    now = datetime.now(tz=UTC)
    meters: dict[str, Meter | None] = {}
    if isinstance(body, dict) and "events" in body:
        events = body["events"]
        if not isinstance(events, list) or not 0 < len(events) <= MAX_BATCH:
            raise ApiError(400, f"events is a list of 1 to {MAX_BATCH} events.", param="events")
        answers = []
        for index, event in enumerate(events):
            try:
                answers.append({"index": index, **_one(event, meters, now), "error": None})
            except EventRefused as refused:
                answers.append({"index": index, "object": "meter_event", "status": "refused",
                                "identifier": event.get("identifier") if isinstance(event, dict) else None,
                                **error_body(400, refused.message, param=refused.param, type=refused.reason)})
        counts = {s: sum(a["status"] == s for a in answers) for s in ("accepted", "duplicate", "refused")}
        return JsonResponse({"object": "list", "data": answers, **counts})
    try:
        return JsonResponse(_one(body, meters, now))
    except EventRefused as refused:
        raise ApiError(400, refused.message, param=refused.param, type=refused.reason) from None
