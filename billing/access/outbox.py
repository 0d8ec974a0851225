"""The merchant's events (docs/TABLE.md ``MerchantEvent``): an outbox. Each event item is
written in the same TransactWriteItems as the change it reports, by the access function
that makes the change, so a change without its event, or an event without its change,
cannot happen. ``events_after`` reads them back in order (the webhooks' sender and
``GET /api/v1/events``).

An event's id is its UTC time to the microsecond and 8 random hex digits, its partition
the UTC day: a day is read with one Query in id (= time) order, and days follow one
another, so ids sort by time across days too.
"""

from __future__ import annotations

import copy
import secrets
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from billing.access._common import is_conditional_failure, transact_with_retries, utc_now, written_by
from billing.exceptions import ConditionFailed
from billing.models import MERCHANT_EVENT_ID, MerchantEvent, MerchantEventType, Receipt, Subscription
from billing.rules.api_objects import receipt_object, subscription_object
from billing.rules.event_objects import payment_attempt_object
from core.clock import billing_today
from core.dynamo.keys import InvalidKey

STAMP = "%Y%m%dT%H%M%S%f"
ID_LENGTH = len("evt_20260101T000000000000Z_0123abcd")
# How long a consumer that remembers its place waits before reading an event: an event's
# id is its time when the change was prepared, and a transaction prepared earlier may
# commit a moment after a later one. Reading only events older than this
# (``events_after(..., until=settled_before())``) never skips one that commits late.
SETTLE_SECONDS = 5

Item = TypeVar("Item", bound=Model)


def event_id(at: datetime) -> str:
    """``evt_<YYYYMMDDTHHMMSSffffff>Z_<8 hex>`` for the UTC instant ``at``."""
    return MERCHANT_EVENT_ID.format(stamp=at.astimezone(UTC).strftime(STAMP), suffix=secrets.token_hex(4))


def event_time(event_id: str) -> datetime:
    """The UTC instant an id was made at; ``InvalidKey`` for anything not an event id."""
    if len(event_id) != ID_LENGTH:
        raise InvalidKey(f"not an event id: {event_id[:40]!r}")
    fields = MERCHANT_EVENT_ID.parse(event_id)
    try:
        int(fields["suffix"], 16)
        return datetime.strptime(fields["stamp"], STAMP).replace(tzinfo=UTC)
    except ValueError as error:
        raise InvalidKey(f"not an event id: {event_id[:40]!r}") from error


_last_now = datetime.min.replace(tzinfo=UTC)
_last_now_lock = threading.Lock()


def _event_now() -> datetime:
    """Now, but after the last event this process made when that is at most a second
    ahead: its events' ids then increase strictly in the order they were made, even when
    the clock stands still (a frozen test clock) or steps back a little. A clock set back
    further (a test travelling in time) is taken as it is."""
    global _last_now
    with _last_now_lock:
        now = utc_now()
        if now <= _last_now < now + timedelta(seconds=1):
            now = _last_now + timedelta(microseconds=1)
        _last_now = now
        return now


def new_merchant_event(type: MerchantEventType | str, *, account_id: str, object_type: str, object_id: str,
                       data: dict[str, Any], at: datetime | None = None) -> MerchantEvent:
    """An event item, not yet written: to join the transaction of the change it reports.
    ``at``: its time (default now, see ``_event_now``)."""
    at = (at or _event_now()).astimezone(UTC)
    eid = event_id(at)
    return MerchantEvent(
        MerchantEvent.pk(day=at.date().isoformat()), eid, EventId=eid, Type=str(MerchantEventType(type)),
        CreatedAt=at.isoformat(timespec="microseconds"), AccountId=account_id, ObjectType=object_type,
        ObjectId=object_id, Data=data, TTL=at + timedelta(days=settings.MERCHANT_EVENT_RETENTION_DAYS),
    )


def subscription_event(type: MerchantEventType, sub: Subscription) -> MerchantEvent:
    """An event about a subscription, carrying it as the API shows it (as it will be once
    the change is written: pass the preview, see ``preview``)."""
    return new_merchant_event(type, account_id=sub.account_id, object_type="subscription", object_id=sub.sub_id,
                              data=subscription_object(sub, billing_today(settings.BILLING_TIMEZONE)))


def receipt_events(receipt: Receipt) -> list[MerchantEvent]:
    """A charge recorded: ``payment.succeeded`` and ``invoice.created``, both carrying the
    receipt (the invoice of the charge) as the API shows it."""
    data = receipt_object(receipt)
    return [new_merchant_event(kind, account_id=receipt.account_id, object_type="receipt", object_id=data["id"],
                               data=data)
            for kind in (MerchantEventType.PAYMENT_SUCCEEDED, MerchantEventType.INVOICE_CREATED)]


def preview(item: Item, actions: list) -> Item:
    """A copy of ``item`` as ``actions`` will leave it (the values known before the write,
    ``written_by``): what the audit's "after" and the event's object show."""
    after = copy.deepcopy(item)
    for name, value in written_by(item, actions).items():
        setattr(after, name, value)
    version = getattr(type(item), "_version_attribute_name", None)
    if version:
        setattr(after, version, (getattr(item, version) or 0) + 1)
    return after


def transact_update(item: Item, actions: list, condition: Condition | None, *, items: Sequence[Model] = (),
                    check_version: bool = True, refused: Callable[[TransactWriteError], Exception] | None = None,
                    ) -> Item:
    """One TransactWriteItems: ``item``'s conditional update (its version moved on, and
    checked when ``check_version``), and ``items`` put beside it (its audit event, its
    merchant events). ``ConditionFailed`` (or ``refused(error)``) when a condition refused
    it: then nothing was written. A conflict with another transaction is tried again.

    A transaction returns no values: ``item`` is brought to what was written (the values
    ``written_by`` knows, and the version PynamoDB moves on)."""
    written = written_by(item, actions)

    def write(tx: Any) -> None:
        tx.update(item, actions=list(actions), condition=condition, add_version_condition=check_version)
        for extra in items:
            save_item(tx, extra)

    try:
        transact_with_retries(write)
    except TransactWriteError as error:
        if is_conditional_failure(error):
            raise (refused(error) if refused else ConditionFailed(item.SK)) from error
        raise
    for name, value in written.items():
        setattr(item, name, value)
    return item


def save_item(tx: Any, item: Model) -> None:
    """Put ``item`` in the transaction ``tx``: a merchant event only if its id is new (ids
    are random: a clash is a bug, and refuses the whole change rather than overwrite)."""
    if isinstance(item, MerchantEvent):
        tx.save(item, condition=MerchantEvent.SK.does_not_exist())
    else:
        tx.save(item)


def settled_before(now: datetime | None = None) -> datetime:
    """The ``until`` of a consumer that remembers its place: see ``SETTLE_SECONDS``."""
    return (now or utc_now()) - timedelta(seconds=SETTLE_SECONDS)


def oldest_kept_day(now: datetime | None = None) -> date:
    return ((now or utc_now()) - timedelta(days=settings.MERCHANT_EVENT_RETENTION_DAYS)).date()


def events_after(after: str | None, *, limit: int = 100,
                 until: datetime | None = None) -> tuple[list[MerchantEvent], str | None]:
    """The events whose id is after ``after``, in id (= time) order, at most ``limit``:
    from ``after``'s day (or the oldest kept day when None), one Query per day partition
    up to today (or ``until``'s day; a day's Query reads on past its expired events, see
    ``_day``), never a Scan. Only events made before ``until`` when given. Returns the
    page and the id to continue after, None when caught up (the caller then continues
    after the last event it has). ``InvalidKey`` (a ValueError) for an ``after`` that is
    not an event id."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    now = utc_now()
    end = min(now, until) if until is not None else now
    start_day = event_time(after).date() if after is not None else oldest_kept_day(now)
    start_day = max(start_day, oldest_kept_day(now))
    upper = f"evt_{until.astimezone(UTC).strftime(STAMP)}Z" if until is not None else None
    page: list[MerchantEvent] = []
    day = start_day
    while day <= end.date():
        lower = after + "~" if after is not None and event_time(after).date() == day else None
        page += _day(day, lower, upper, limit - len(page), now)
        if len(page) >= limit:
            return page[:limit], page[limit - 1].EventId
        day += timedelta(days=1)
    return page, None


def _day(day: date, lower: str | None, upper: str | None, limit: int, now: datetime) -> list[MerchantEvent]:
    """The first ``limit`` live events of a day's partition: ids > ``lower``'s id and <
    ``upper`` (a bare ``evt_<stamp>Z``: below every id of that instant). ``lower`` is an
    id + "~": ids are of one length, so every id after it is above that too.

    DynamoDB deletes expired events lazily, so a day may still hold them. They are left
    out by the Query's filter, and the Query goes on (further requests) until it has
    ``limit`` live ones or the day is over: a day is never left with live events unread
    (a ``limit`` counting expired ones would skip to the next day past them)."""
    sk = MerchantEvent.SK
    if lower and upper:
        if upper <= lower:
            return []
        condition = sk.between(lower, upper)
    elif lower:
        condition = sk > lower
    elif upper:
        condition = sk < upper
    else:
        condition = None
    live = MerchantEvent.TTL.does_not_exist() | (now < MerchantEvent.TTL)
    # PynamoDB's ``limit`` counts the items the filter kept, reading page after page.
    return list(MerchantEvent.query(MerchantEvent.pk(day=day.isoformat()), condition, filter_condition=live,
                                    consistent_read=True, limit=limit))


def payment_attempt_event(type: MerchantEventType, sub: Subscription, **attempt: Any) -> MerchantEvent:
    """``payment.failed`` or ``payment.action_required`` for one attempt to charge ``sub``
    (``attempt``: ``rules.event_objects.payment_attempt_object``'s fields but ``status``)."""
    status = "action_required" if type == MerchantEventType.PAYMENT_ACTION_REQUIRED else "failed"
    data = payment_attempt_object(sub, status=status, **attempt)
    return new_merchant_event(type, account_id=sub.account_id, object_type="payment", object_id=data["id"], data=data)
