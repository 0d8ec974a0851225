"""Meters and usage events (docs/USAGE.md): each event counted exactly once, whatever the
retries and however many senders at once.

An event is ONE TransactWriteItems: the event's record put only if its identifier is not
already there (the de-duplication), a check that the account exists and is open, a check
that the event's day is after the meter's "billed through" day, and the update of the day's
aggregate (ADD for counts and sums; a conditional SET for max and last), with a
unique_count meter's value marker. Either all of it is written or none: an identifier sent
by eight threads at once is counted by exactly one of them.

A max or last meter's SET is conditional (only a larger value, a later event); when that
condition alone cancels the transaction, it runs again without the SET (the event is
counted; it did not raise the max). The cancellation reasons are positional: ``_ITEMS``
names the place of each part.
"""

from __future__ import annotations

import hashlib
import random
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from pynamodb.exceptions import PutError, TransactWriteError

from billing.access._common import absent_if_invalid, iso_now, update_if
from billing.exceptions import AlreadyExists
from billing.models import (
    Account,
    Meter,
    MeterAggregation,
    MeterEventRecord,
    UsageAggregate,
    UsageBilledThrough,
    UsageValueMarker,
)
from billing.rules.usage import DEDUPE_DAYS, EventRefused, Partial, merge, period_days, quantity
from core.dynamo import engine

# Write shards of a day's aggregate: one customer sending thousands of events a second
# spreads its updates over this many items (docs/PERFORMANCE.md, "Metered usage"). Reads
# merge whatever shards exist, so the count can change at any time.
USAGE_SHARDS = 16
# Where each part of an event's transaction is (CancellationReasons are positional).
# PynamoDB sends a transaction's items grouped by kind, whatever the order they were added
# in: condition checks, deletes, puts, updates. So: the account's and the watermark's
# checks, the event's record (and a unique_count meter's marker), the aggregate's update last.
_ACCOUNT, _BILLED, _RECORD, _AGGREGATE = 0, 1, 2, -1
_CONFLICT_ATTEMPTS = 8


class Recorded(str):
    """What became of an event: ``accepted`` (counted now) or ``duplicate`` (counted before)."""


ACCEPTED = Recorded("accepted")
DUPLICATE = Recorded("duplicate")


@dataclass(frozen=True)
class UsageEvent:
    """An event as checked by billing/rules/usage.py: ready to be written."""

    account_id: str
    identifier: str
    value: Decimal | str
    timestamp: int
    day: str


# --- meters ------------------------------------------------------------------------------


def create_meter(event_name: str, name: str, aggregation: MeterAggregation, *, actor: str) -> Meter:
    meter = Meter(Meter.pk(), Meter.sk(event_name=event_name), EventName=event_name, Name=name,
                  Aggregation=str(aggregation), CreatedAt=iso_now(), CreatedBy=actor)
    try:
        meter.save(condition=Meter.SK.does_not_exist())
    except PutError as error:
        if getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException":
            raise AlreadyExists(event_name) from error
        raise
    return meter


@absent_if_invalid()
def get_meter(event_name: str) -> Meter | None:
    try:
        return Meter.get(Meter.pk(), Meter.sk(event_name=event_name))
    except Meter.DoesNotExist:
        return None


def list_meters() -> list[Meter]:
    """Every meter (one partition: one Query, meters are few), by event name."""
    return list(Meter.query(Meter.pk()))


# --- one event ---------------------------------------------------------------------------


def shard_of(identifier: str, shards: int = USAGE_SHARDS) -> str:
    """The write shard of an event: CRC-32 of its identifier (the same on every retry)."""
    return f"{zlib.crc32(identifier.encode()) % shards:02d}"


def value_hash(value: Decimal | str) -> str:
    return hashlib.sha256(str(value).encode()).hexdigest()[:32]


def recorded_value(value: Decimal | str, aggregation: MeterAggregation) -> str:
    """What an event's record keeps of its value: the number; a unique_count meter's value
    (a user id, an e-mail, a host name: it may name a person, and nothing reads it back)
    only as its hash, as the day's marker keeps it, so no text of it outlives the event's
    transaction in the table."""
    if aggregation == MeterAggregation.UNIQUE_COUNT:
        return f"sha256:{value_hash(value)}"
    return str(value)


def _reason(error: TransactWriteError, place: int) -> str | None:
    reasons = error.cancellation_reasons or []
    reason = reasons[place] if -len(reasons) <= place < len(reasons) else None
    return reason.code if reason is not None else None


def record_event(meter: Meter, event: UsageEvent, *, now: datetime | None = None) -> Recorded:
    """Count ``event`` on ``meter`` once: ``ACCEPTED``, or ``DUPLICATE`` when its identifier
    was counted within 35 days. Refused (``EventRefused``): an unknown or closed customer
    (``customer``), a day already billed (``timestamp``). One TransactWriteItems; one more
    when a max or last meter's value does not raise its aggregate."""
    now = now or datetime.now(tz=UTC)
    raise_aggregate = True
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            _transaction(meter, event, now, raise_aggregate=raise_aggregate)
            return ACCEPTED
        except TransactWriteError as error:
            codes = {place: _reason(error, place) for place in (_ACCOUNT, _BILLED, _RECORD, _AGGREGATE)}
            failed = {place for place, code in codes.items() if code == "ConditionalCheckFailed"}
            if _RECORD in failed:
                return DUPLICATE  # counted already: whatever else failed, nothing more to do
            if _ACCOUNT in failed:
                raise EventRefused("unknown_customer", "customer", "No such customer (or the account is closed).") \
                    from None
            if _BILLED in failed:
                raise EventRefused("period_billed", "timestamp",
                                   f"The usage of {event.day} has been billed already: it cannot change.") from None
            if failed == {_AGGREGATE} and raise_aggregate:
                # Only the max/last condition: the event is counted without moving that value.
                raise_aggregate = False
                continue
            reasons = {r.code for r in error.cancellation_reasons or [] if r is not None}
            conflict = bool(reasons & {"TransactionConflict", "ThrottlingError"}) or \
                getattr(error, "cause_response_code", None) == "TransactionConflictException"
            if not conflict or failed or attempt == _CONFLICT_ATTEMPTS - 1:
                raise
            # Another sender's transaction on one of these items, or a hot item throttled:
            # again, after a jittered pause (the record's condition still guards the count).
            time.sleep(random.uniform(0.005, 0.02) * 2 ** min(attempt, 4))
    raise RuntimeError("unreachable")  # pragma: no cover


def _transaction(meter: Meter, event: UsageEvent, now: datetime, *, raise_aggregate: bool) -> None:
    aggregation = MeterAggregation(meter.Aggregation)
    account, name = event.account_id, meter.EventName
    expires = int((now + timedelta(days=DEDUPE_DAYS)).timestamp())
    record = MeterEventRecord(
        MeterEventRecord.pk(account_id=account, identifier=event.identifier),
        MeterEventRecord.sk(account_id=account, identifier=event.identifier),
        EventName=name, Value=recorded_value(event.value, aggregation), Timestamp=event.timestamp, Day=event.day,
        ReceivedAt=now.isoformat(timespec="seconds"), ExpiresAt=expires,
        TTL=datetime.fromtimestamp(expires, tz=UTC))
    shard = shard_of(event.identifier)
    aggregate = UsageAggregate(UsageAggregate.pk(account_id=account, event_name=name),
                               UsageAggregate.sk(day=event.day, shard=shard))
    actions = [UsageAggregate.Events.add(1), UsageAggregate.EntityType.set(UsageAggregate)]
    condition = None
    if aggregation == MeterAggregation.SUM:
        actions.append(UsageAggregate.Sum.add(event.value))
    elif aggregation == MeterAggregation.MAX and raise_aggregate:
        actions.append(UsageAggregate.Max.set(event.value))
        condition = UsageAggregate.Max.does_not_exist() | (UsageAggregate.Max < event.value)
    elif aggregation == MeterAggregation.LAST and raise_aggregate:
        actions += [UsageAggregate.Last.set(event.value), UsageAggregate.LastAt.set(event.timestamp),
                    UsageAggregate.LastId.set(event.identifier)]
        condition = (UsageAggregate.LastAt.does_not_exist() | (UsageAggregate.LastAt < event.timestamp)
                     | ((UsageAggregate.LastAt == event.timestamp) & (UsageAggregate.LastId < event.identifier)))
    with engine.transact_write() as tx:
        # Sent as _ACCOUNT, _BILLED, _RECORD (marker), _AGGREGATE: the reasons are read by place.
        tx.save(record, condition=MeterEventRecord.PK.does_not_exist()
                | (MeterEventRecord.ExpiresAt < int(now.timestamp())))
        tx.condition_check(Account, Account.pk(account_id=account), Account.sk(account_id=account),
                           condition=Account.PK.exists() & Account.ClosedDate.does_not_exist())
        tx.condition_check(UsageBilledThrough, UsageBilledThrough.pk(account_id=account, event_name=name),
                           UsageBilledThrough.sk(shard=shard), condition=UsageBilledThrough.BilledThrough.does_not_exist()
                           | (UsageBilledThrough.BilledThrough < event.day))
        tx.update(aggregate, actions=actions, condition=condition)
        if aggregation == MeterAggregation.UNIQUE_COUNT:
            tx.save(UsageValueMarker(UsageValueMarker.pk(account_id=account, event_name=name),
                                     UsageValueMarker.sk(day=event.day, value_hash=value_hash(event.value))))


# --- reading and billing -----------------------------------------------------------------


def _partial(item: UsageAggregate) -> Partial:
    last_at = (int(item.LastAt), item.LastId or "") if item.LastAt is not None else None
    return Partial(events=int(item.Events or 0), sum=item.Sum or Decimal(0), max=item.Max, last=item.Last,
                   last_at=last_at)


@absent_if_invalid(lambda: [])
def day_aggregates(account_id: str, event_name: str, start: date, end: date, *,
                   consistent: bool = False) -> list[UsageAggregate]:
    """The aggregates of the days ``[start, end)``, every shard: one Query (paged by PynamoDB
    past 1 MB: a month of 16 shards is about 500 small items, one page)."""
    first, last = period_days(start, end)
    return list(UsageAggregate.query(
        UsageAggregate.pk(account_id=account_id, event_name=event_name),
        UsageAggregate.SK.between(f"{first}#", f"{last}#~"), consistent_read=consistent))


def _distinct_values(account_id: str, event_name: str, start: date, end: date, *, consistent: bool) -> int:
    first, last = period_days(start, end)
    markers = UsageValueMarker.query(
        UsageValueMarker.pk(account_id=account_id, event_name=event_name),
        UsageValueMarker.SK.between(f"U#{first}#", f"U#{last}#~"), consistent_read=consistent)
    return len({marker.SK.rsplit("#", 1)[1] for marker in markers})


@dataclass(frozen=True)
class Counted:
    """A period's usage by the meter's aggregation and the events counted in it (a distinct
    value each, for unique_count): a sum of events of 0, or a max that stayed 0, is used
    at 0 but still counted, so its period is billed (a receipt of 0) and not "nothing used"."""

    quantity: int | Decimal
    events: int


def counted_of(meter: Meter, account_id: str, start: date, end: date, *, consistent: bool = False) -> Counted:
    """``account_id``'s usage of ``meter`` over the billing days ``[start, end)`` and its events:
    one Query (of the days' aggregates; for unique_count, of its value markers).
    ``consistent``: a strongly consistent read, for billing (every event committed before
    ``mark_billed`` is in it); the "so far" display reads eventually consistent (half the cost)."""
    aggregation = MeterAggregation(meter.Aggregation)
    if aggregation == MeterAggregation.UNIQUE_COUNT:
        distinct = _distinct_values(account_id, meter.EventName, start, end, consistent=consistent)
        return Counted(quantity(aggregation, Partial(), distinct), distinct)
    items = day_aggregates(account_id, meter.EventName, start, end, consistent=consistent)
    total = merge([_partial(item) for item in items])
    return Counted(quantity(aggregation, total), total.events)


def usage_of(meter: Meter, account_id: str, start: date, end: date, *, consistent: bool = False) -> int | Decimal:
    """``account_id``'s usage of ``meter`` over the billing days ``[start, end)``, its aggregation
    applied (``counted_of``'s quantity: one Query)."""
    return counted_of(meter, account_id, start, end, consistent=consistent).quantity


def usage_by_day(meter: Meter, account_id: str, start: date, end: date) -> dict[date, int | Decimal]:
    """``account_id``'s usage of ``meter`` on each billing day of ``[start, end)`` that has any,
    each day's shards merged and its aggregation applied to the day alone (a day's distinct
    values for unique_count): one eventually consistent Query, a display (a period's usage
    is ``usage_of``: a maximum or a distinct count is not the days' sum)."""
    aggregation = MeterAggregation(meter.Aggregation)
    if aggregation == MeterAggregation.UNIQUE_COUNT:
        first, last = period_days(start, end)
        values: dict[date, set[str]] = {}
        for marker in UsageValueMarker.query(UsageValueMarker.pk(account_id=account_id, event_name=meter.EventName),
                                             UsageValueMarker.SK.between(f"U#{first}#", f"U#{last}#~")):
            _, day, value = marker.SK.split("#", 2)
            values.setdefault(date.fromisoformat(day), set()).add(value)
        return {day: quantity(aggregation, Partial(), len(seen)) for day, seen in sorted(values.items())}
    days: dict[date, list[Partial]] = {}
    for item in day_aggregates(account_id, meter.EventName, start, end):
        days.setdefault(date.fromisoformat(item.SK.split("#", 1)[0]), []).append(_partial(item))
    return {day: quantity(aggregation, merge(partials)) for day, partials in sorted(days.items())}


# Every day a usage aggregate's key can name: the whole of a customer's usage of a meter.
EVERY_DAY = (date(2000, 1, 1), date(9999, 12, 31))


def account_usage(account_id: str) -> list[tuple[Meter, dict[date, int | Decimal]]]:
    """Each meter ``account_id`` has used, with its usage day by day (``usage_by_day``): the
    customer's copy of its data (the export). The meters' Query, then one Query per meter."""
    return [(meter, days) for meter in list_meters() if (days := usage_by_day(meter, account_id, *EVERY_DAY))]


def usage_for_period(account_id: str, event_name: str, start: date, end: date) -> int | Decimal:
    """The usage to bill for ``[start, end)`` (call ``mark_billed`` first): the meter's
    GetItem, then one strongly consistent Query; 0 for a meter that does not exist."""
    return counted_for_period(account_id, event_name, start, end).quantity


def counted_for_period(account_id: str, event_name: str, start: date, end: date) -> Counted:
    """``usage_for_period`` with the events it counted (the same two requests)."""
    meter = get_meter(event_name)
    return counted_of(meter, account_id, start, end, consistent=True) if meter is not None else Counted(0, 0)


def billed_through(account_id: str, event_name: str) -> str | None:
    """The day up to which every shard is billed (None: never billed): one Query."""
    marks = list(UsageBilledThrough.query(
        UsageBilledThrough.pk(account_id=account_id, event_name=event_name),
        UsageBilledThrough.SK.startswith(UsageBilledThrough.sk_template.prefix), consistent_read=True))
    if len(marks) < USAGE_SHARDS:
        return None
    return min(mark.BilledThrough for mark in marks)


def mark_billed(account_id: str, event_name: str, through_day: date) -> None:
    """Close the days up to ``through_day``: from now on an event of such a day is refused.
    Each shard's copy only ever moves forward (one conditional UpdateItem per shard; an
    earlier day than the one recorded changes nothing), so a call cut short is finished by
    calling it again. The usage billing calls it BEFORE it reads ``usage_for_period`` for
    the period it charges: an event is then either in the aggregate it reads (its
    transaction committed first) or refused (it checks its shard's copy), never counted
    and left unbilled."""
    day = through_day.isoformat()
    for n in range(USAGE_SHARDS):
        item = UsageBilledThrough(UsageBilledThrough.pk(account_id=account_id, event_name=event_name),
                                  UsageBilledThrough.sk(shard=f"{n:02d}"))
        # Refused: this shard is billed through that day or later already, nothing to move.
        update_if(item, [UsageBilledThrough.BilledThrough.set(day), UsageBilledThrough.UpdatedAt.set(iso_now()),
                         UsageBilledThrough.EntityType.set(UsageBilledThrough)],
                  UsageBilledThrough.BilledThrough.does_not_exist() | (UsageBilledThrough.BilledThrough < day))
