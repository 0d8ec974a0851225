"""Outbound webhooks: the merchant's endpoints (one partition, ``WHENDPOINTS``) and each
endpoint's deliveries (``WHDELIVERIES#<endpoint id>``, sorted by event id: queue and log
at once). docs/TABLE.md, "Outbound webhooks", says how the keys give "oldest first per
endpoint" and "each attempt once".

Two marks on the endpoint keep the sender's reads short: ``Cursor`` (the last event turned
into a delivery) and ``DoneThrough`` (every delivery at or before it is finished). The
sender reads the queue from ``DoneThrough``, never the whole log. ``DoneThrough`` never
passes ``Cursor``, and a delivery put outside the stream (a test event, a resend) is put
just after ``Cursor`` in a transaction conditioned on it, so it lands after ``DoneThrough``
too; ``Inserts`` counts those puts, and moving ``DoneThrough`` is conditioned on the count
the sender read, so it never steps over a delivery it has not seen.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from pynamodb.exceptions import DoesNotExist, PutError, TransactWriteError

from billing.access._common import (
    absent_if_invalid,
    is_conditional_failure,
    new_id,
    refused_as,
    transact_with_retries,
    update_if,
    utc_now,
)
from billing.exceptions import ConditionFailed
from billing.models import (
    UNFINISHED_DELIVERIES,
    DeliveryStatus,
    EndpointStatus,
    WebhookDelivery,
    WebhookEndpoint,
)
from core.dynamo import engine

DELIVERY_RETENTION_DAYS = 30  # the delivery log's TTL, counted from the delivery's creation
DELIVERY_LOG_PAGE = 100  # the staff page's one Query


def iso_time(at: datetime) -> str:
    """Every time this module stores: UTC, microseconds, so two of them compare as text."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def stream_position(at: datetime) -> str:
    """A position in the event stream at ``at``, shaped as an event id so that
    ``events_after`` takes it: before every event made after ``at`` (its suffix is the lowest)."""
    return f"evt_{at.astimezone(UTC).strftime('%Y%m%dT%H%M%S%f')}Z_00000000"


# --- endpoints ------------------------------------------------------------------------


def create_endpoint(url: str, event_types: list[str] | None, secret: str, *, actor: str,
                    description: str | None = None) -> WebhookEndpoint:
    """A new enabled endpoint that hears the events made from now on."""
    now = utc_now()
    endpoint_id = "ep_" + new_id()
    start = stream_position(now)
    endpoint = WebhookEndpoint(
        WebhookEndpoint.pk(), WebhookEndpoint.sk(endpoint_id=endpoint_id), EndpointId=endpoint_id, Url=url,
        Description=description or None, EventTypes=sorted(event_types) if event_types else None, Secret=secret,
        Status=EndpointStatus.ENABLED, Cursor=start, DoneThrough=start, Inserts=0, CreatedAt=iso_time(now),
        CreatedBy=actor)
    endpoint.save(condition=WebhookEndpoint.SK.does_not_exist())
    return endpoint


def list_endpoints() -> list[WebhookEndpoint]:
    """Every endpoint, in id order: one Query."""
    return list(WebhookEndpoint.query(WebhookEndpoint.pk(), consistent_read=True))


@absent_if_invalid()
def get_endpoint(endpoint_id: str) -> WebhookEndpoint | None:
    try:
        return WebhookEndpoint.get(WebhookEndpoint.pk(), WebhookEndpoint.sk(endpoint_id=endpoint_id),
                                   consistent_read=True)
    except DoesNotExist:
        return None


def _endpoint_key(endpoint_id: str) -> WebhookEndpoint:
    return WebhookEndpoint(WebhookEndpoint.pk(), WebhookEndpoint.sk(endpoint_id=endpoint_id))


def set_endpoint_status(endpoint: WebhookEndpoint, status: EndpointStatus, *, reason: str | None) -> WebhookEndpoint:
    """Enable or disable; enabling forgets the failures (the sender starts afresh)."""
    now = iso_time(utc_now())
    actions = [WebhookEndpoint.Status.set(status), WebhookEndpoint.UpdatedAt.set(now)]
    if status == EndpointStatus.DISABLED:
        actions += [WebhookEndpoint.DisabledAt.set(now), WebhookEndpoint.DisabledReason.set(reason)]
    else:
        actions += [WebhookEndpoint.DisabledAt.remove(), WebhookEndpoint.DisabledReason.remove(),
                    WebhookEndpoint.FailingSince.remove()]
    with refused_as(ConditionFailed, endpoint.SK):
        endpoint.update(actions=actions, condition=WebhookEndpoint.SK.exists())
    return endpoint


def disable_failing_endpoint(endpoint_id: str) -> bool:
    """The sender's disable: only if still enabled (False: someone did it first)."""
    now = iso_time(utc_now())
    return update_if(
        _endpoint_key(endpoint_id),
        [WebhookEndpoint.Status.set(EndpointStatus.DISABLED), WebhookEndpoint.DisabledAt.set(now),
         WebhookEndpoint.DisabledReason.set("failing"), WebhookEndpoint.UpdatedAt.set(now)],
        WebhookEndpoint.Status == EndpointStatus.ENABLED)


def rotate_endpoint_secret(endpoint: WebhookEndpoint, new_secret: str, *, overlap: timedelta) -> WebhookEndpoint:
    """The new secret signs from now on; the current one signs beside it for ``overlap``."""
    now = utc_now()
    with refused_as(ConditionFailed, endpoint.SK):
        endpoint.update(actions=[
            WebhookEndpoint.PreviousSecret.set(endpoint.Secret),
            WebhookEndpoint.PreviousSecretUntil.set(iso_time(now + overlap)),
            WebhookEndpoint.Secret.set(new_secret), WebhookEndpoint.UpdatedAt.set(iso_time(now)),
        ], condition=WebhookEndpoint.Secret == endpoint.Secret)
    return endpoint


def mark_endpoint_failing(endpoint_id: str, since: datetime) -> None:
    """Record when the endpoint's current run of failures began (kept if already set)."""
    _endpoint_key(endpoint_id).update(
        actions=[WebhookEndpoint.FailingSince.set(WebhookEndpoint.FailingSince | iso_time(since))],
        condition=WebhookEndpoint.SK.exists())


def clear_endpoint_failing(endpoint_id: str) -> None:
    _endpoint_key(endpoint_id).update(actions=[WebhookEndpoint.FailingSince.remove()],
                                      condition=WebhookEndpoint.SK.exists())


def advance_cursor(endpoint: WebhookEndpoint, to: str) -> bool:
    """Move the fan-out cursor from where ``endpoint`` read it to ``to`` (False: another
    sender moved it first; its deliveries are the same, put only if absent)."""
    if not update_if(_endpoint_key(endpoint.EndpointId), [WebhookEndpoint.Cursor.set(to)],
                     WebhookEndpoint.Cursor == endpoint.Cursor):
        return False
    endpoint.Cursor = to
    return True


def advance_done_through(endpoint: WebhookEndpoint, to: str) -> bool:
    """Every delivery up to ``to`` is finished: move ``DoneThrough`` there, unless it is
    there already, ``to`` is past the cursor, or a delivery was put since ``endpoint`` was
    read (its ``Inserts``). False: not moved (the next pass reads a little more)."""
    if not update_if(_endpoint_key(endpoint.EndpointId), [WebhookEndpoint.DoneThrough.set(to)],
                     (WebhookEndpoint.DoneThrough < to) & (WebhookEndpoint.Cursor >= to)
                     & (WebhookEndpoint.Inserts == endpoint.Inserts)):
        return False
    endpoint.DoneThrough = to
    return True


def count_attempts(endpoint_id: str, *, succeeded: int, failed: int, abandoned: int) -> None:
    """Add a pass's attempts by outcome to the endpoint's counts (one UpdateItem)."""
    actions = [attribute.add(n) for attribute, n in ((WebhookEndpoint.SucceededCount, succeeded),
                                                     (WebhookEndpoint.FailedCount, failed),
                                                     (WebhookEndpoint.AbandonedCount, abandoned)) if n]
    if actions:
        _endpoint_key(endpoint_id).update(actions=actions, condition=WebhookEndpoint.SK.exists())


# --- deliveries -----------------------------------------------------------------------


def _ttl(now: datetime) -> datetime:
    return now + timedelta(days=DELIVERY_RETENTION_DAYS)


def queue_delivery(endpoint_id: str, *, event_id: str, event_type: str, payload: str) -> bool:
    """An event's delivery to an endpoint, put if absent (False: queued before, by this
    sender's previous pass or by another sender)."""
    delivery = _delivery(endpoint_id, event_id, event_type, payload, utc_now())
    try:
        delivery.save(condition=WebhookDelivery.SK.does_not_exist())
    except PutError as error:
        if is_conditional_failure(error):
            return False
        raise
    return True


FAN_OUT_TRANSACTION = 50  # deliveries put by one TransactWriteItems (DynamoDB's limit is 100 items)


def queue_deliveries(endpoint_id: str, events: list[tuple[str, str, str]]) -> int:
    """Events' deliveries to an endpoint, each put only if absent: ``FAN_OUT_TRANSACTION`` at a
    time in one TransactWriteItems (one request for many: the fan-out is most of a quiet
    delivery's writes otherwise). When another sender put some of them first the transaction
    is refused whole, and that chunk is put one by one. ``events``: (id, type, payload).
    How many this call put."""
    put = 0
    for first in range(0, len(events), FAN_OUT_TRANSACTION):
        chunk = events[first:first + FAN_OUT_TRANSACTION]
        if len(chunk) == 1:
            put += queue_delivery(endpoint_id, event_id=chunk[0][0], event_type=chunk[0][1], payload=chunk[0][2])
            continue
        now = utc_now()
        try:
            with engine.transact_write() as tx:
                for event_id, event_type, payload in chunk:
                    tx.save(_delivery(endpoint_id, event_id, event_type, payload, now),
                            condition=WebhookDelivery.SK.does_not_exist())
        except TransactWriteError as error:
            if not is_conditional_failure(error):
                raise
            put += sum(queue_delivery(endpoint_id, event_id=i, event_type=t, payload=p) for i, t, p in chunk)
        else:
            put += len(chunk)
    return put


def _delivery(endpoint_id: str, event_id: str, event_type: str, payload: str, now: datetime) -> WebhookDelivery:
    return WebhookDelivery(
        WebhookDelivery.pk(endpoint_id=endpoint_id), WebhookDelivery.sk(position=event_id), EventId=event_id,
        EventType=event_type, Payload=payload, Status=DeliveryStatus.PENDING, Attempts=0, CreatedAt=iso_time(now),
        NextAttemptAt=iso_time(now), TTL=_ttl(now))


def queue_extra_delivery(endpoint_id: str, *, kind: str, event_id: str, event_type: str, payload: str,
                         tries: int = 5) -> WebhookDelivery:
    """A delivery outside the stream (``kind``: "test" or "resend"), queued after every
    delivery queued so far: keyed just after the endpoint's cursor, in one transaction
    with the condition that the cursor is still there (tried again if a sender moved it)."""
    for _ in range(tries):
        endpoint = get_endpoint(endpoint_id)
        if endpoint is None:
            raise ConditionFailed(endpoint_id)
        now = utc_now()
        position = f"{endpoint.Cursor}~{now.strftime('%Y%m%dT%H%M%S%f')}_{secrets.token_hex(4)}"
        delivery = WebhookDelivery(
            WebhookDelivery.pk(endpoint_id=endpoint_id), WebhookDelivery.sk(position=position), EventId=event_id,
            EventType=event_type, Payload=payload, Status=DeliveryStatus.PENDING, Attempts=0, CreatedAt=iso_time(now),
            NextAttemptAt=iso_time(now), Kind=kind, TTL=_ttl(now))
        try:
            with engine.transact_write() as tx:
                tx.save(delivery, condition=WebhookDelivery.SK.does_not_exist())
                tx.update(_endpoint_key(endpoint_id), actions=[WebhookEndpoint.Inserts.add(1)],
                          condition=WebhookEndpoint.Cursor == endpoint.Cursor)
        except TransactWriteError as error:
            if is_conditional_failure(error):
                continue
            raise
        return delivery
    raise ConditionFailed(endpoint_id)


def queue_page(endpoint: WebhookEndpoint, *, limit: int = 25) -> list[WebhookDelivery]:
    """The endpoint's deliveries after ``DoneThrough``, oldest first: one strongly
    consistent Query (the claims that follow are conditional anyway)."""
    return list(WebhookDelivery.query(WebhookDelivery.pk(endpoint_id=endpoint.EndpointId),
                                      WebhookDelivery.SK > endpoint.DoneThrough, limit=limit,  # noqa: SIM300
                                      consistent_read=True))


def _claim(delivery: WebhookDelivery, *, owner: str, now: datetime, lease: timedelta) -> tuple[list, object]:
    """The claim's actions and condition: unfinished, ``Attempts`` as read, no live lease."""
    seen = delivery.Attempts or 0
    stamp = iso_time(now)
    counted = (WebhookDelivery.Attempts == seen) if seen else \
        (WebhookDelivery.Attempts.does_not_exist() | (WebhookDelivery.Attempts == 0))
    condition = (WebhookDelivery.Status.is_in(*UNFINISHED_DELIVERIES) & counted
                 & (WebhookDelivery.LeaseUntil.does_not_exist() | (WebhookDelivery.LeaseUntil < stamp)))
    actions = [WebhookDelivery.Attempts.set(seen + 1), WebhookDelivery.LeaseUntil.set(iso_time(now + lease)),
               WebhookDelivery.LeaseOwner.set(owner), WebhookDelivery.LastAttemptAt.set(stamp),
               WebhookDelivery.FirstAttemptAt.set(WebhookDelivery.FirstAttemptAt | stamp)]
    return actions, condition


def claim_delivery(delivery: WebhookDelivery, *, owner: str, now: datetime, lease: timedelta) -> bool:
    """Take the delivery's next attempt: one conditional UpdateItem that counts the attempt
    and leases it to ``owner``. Refused (False) when it is finished, another sender counted
    an attempt since it was read, or another sender's lease is still running."""
    actions, condition = _claim(delivery, owner=owner, now=now, lease=lease)
    return update_if(delivery, actions, condition)


def claim_deliveries(deliveries: list[WebhookDelivery], *, owner: str, now: datetime, lease: timedelta) -> bool:
    """Claim several of an endpoint's deliveries at once (the next ones in its order), each
    as ``claim_delivery`` would, in one TransactWriteItems: all or none (False: another
    sender has one of them; the caller claims the first alone). The items are brought to
    what was written (a transaction returns no values)."""
    if len(deliveries) == 1:
        return claim_delivery(deliveries[0], owner=owner, now=now, lease=lease)
    try:
        with engine.transact_write() as tx:
            for delivery in deliveries:
                actions, condition = _claim(delivery, owner=owner, now=now, lease=lease)
                tx.update(delivery, actions=actions, condition=condition)
    except TransactWriteError:
        return False  # refused, or met another sender's transaction: the caller falls back
    stamp = iso_time(now)
    for delivery in deliveries:
        delivery.Attempts = (delivery.Attempts or 0) + 1
        delivery.LeaseUntil, delivery.LeaseOwner = iso_time(now + lease), owner
        delivery.LastAttemptAt = stamp
        delivery.FirstAttemptAt = delivery.FirstAttemptAt or stamp
    return True


def release_claims(deliveries: list[WebhookDelivery], *, owner: str) -> None:
    """Give back claims made but not attempted (the attempt they counted is uncounted), so
    the next pass takes them at once; one whose lease another sender took since is left."""
    for delivery in deliveries:
        update_if(delivery, [WebhookDelivery.Attempts.set((delivery.Attempts or 1) - 1),
                             WebhookDelivery.LeaseUntil.remove(), WebhookDelivery.LeaseOwner.remove()],
                  (WebhookDelivery.LeaseOwner == owner) & (WebhookDelivery.Attempts == delivery.Attempts))


def _outcome(delivery: WebhookDelivery, *, owner: str, status: DeliveryStatus, code: int | None, response: str,
             duration_ms: int, next_attempt: datetime | None) -> tuple[list, object]:
    now = utc_now()
    actions = [WebhookDelivery.Status.set(status), WebhookDelivery.LastResponse.set(response[:1024]),
               WebhookDelivery.LastDurationMs.set(duration_ms), WebhookDelivery.LeaseUntil.remove(),
               WebhookDelivery.LeaseOwner.remove()]
    actions.append(WebhookDelivery.LastStatusCode.set(code) if code is not None
                   else WebhookDelivery.LastStatusCode.remove())
    actions.append(WebhookDelivery.NextAttemptAt.set(iso_time(next_attempt)) if next_attempt is not None
                   else WebhookDelivery.NextAttemptAt.remove())
    if status == DeliveryStatus.SUCCEEDED:
        actions.append(WebhookDelivery.DeliveredAt.set(iso_time(now)))
    return actions, (WebhookDelivery.LeaseOwner == owner) & (WebhookDelivery.Attempts == delivery.Attempts)


def record_attempt(delivery: WebhookDelivery, *, owner: str, status: DeliveryStatus, code: int | None,
                   response: str, duration_ms: int, next_attempt: datetime | None) -> bool:
    """How the claimed attempt went, and the lease given back: only while the attempt is
    still ``owner``'s (False: its lease ran out and another sender took the next one)."""
    actions, condition = _outcome(delivery, owner=owner, status=status, code=code, response=response,
                                  duration_ms=duration_ms, next_attempt=next_attempt)
    return update_if(delivery, actions, condition)


def record_successes(outcomes: list[tuple[WebhookDelivery, int, str, int]], *, owner: str) -> int:
    """Several claimed attempts that succeeded, as (delivery, code, response, ms): one
    TransactWriteItems; when it is refused (a lease lost), one by one. How many were recorded."""
    if len(outcomes) > 1:
        def write(tx: object) -> None:
            for delivery, code, response, ms in outcomes:
                actions, condition = _outcome(delivery, owner=owner, status=DeliveryStatus.SUCCEEDED, code=code,
                                              response=response, duration_ms=ms, next_attempt=None)
                tx.update(delivery, actions=actions, condition=condition)

        try:
            transact_with_retries(write)
            return len(outcomes)
        except TransactWriteError:
            pass
    return sum(record_attempt(d, owner=owner, status=DeliveryStatus.SUCCEEDED, code=code, response=response,
                              duration_ms=ms, next_attempt=None) for d, code, response, ms in outcomes)


def delivery_log(endpoint_id: str, *, limit: int = DELIVERY_LOG_PAGE) -> list[WebhookDelivery]:
    """The endpoint's deliveries, newest first: one Query."""
    return list(WebhookDelivery.query(WebhookDelivery.pk(endpoint_id=endpoint_id), scan_index_forward=False,
                                      limit=limit))


@absent_if_invalid()
def get_delivery(endpoint_id: str, position: str) -> WebhookDelivery | None:
    try:
        return WebhookDelivery.get(WebhookDelivery.pk(endpoint_id=endpoint_id), WebhookDelivery.sk(position=position),
                                   consistent_read=True)
    except DoesNotExist:
        return None


def oldest_unfinished(endpoint: WebhookEndpoint) -> WebhookDelivery | None:
    """The endpoint's oldest delivery not yet finished (the metrics' "oldest undelivered"):
    the first of its queue page that is unfinished."""
    for delivery in queue_page(endpoint, limit=25):
        if not delivery.finished:
            return delivery
    return None
