"""Metered usage, pure (docs/USAGE.md): what a usage event must be to be counted, and how a
period's day aggregates merge into one quantity for each aggregation.

An event lands in the aggregate of its billing day (the calendar day of ``BILLING_TIMEZONE``,
the calendar the payment days are in) and of one write shard; each aggregate holds
what every aggregation needs (``Partial``). A period's usage merges the partials of its days
and shards with ``combine`` (associative and commutative, so the order of the Query's items
and the number of shards change nothing) and reads the meter's aggregation with ``quantity``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from billing.models import MeterAggregation
from core.clock import billing_today

# Stripe's window: an event up to 35 days old, or up to 5 minutes ahead of the clock.
MAX_AGE = timedelta(days=35)
MAX_AHEAD = timedelta(minutes=5)
# How long an identifier is remembered: as long as an event may be late.
DEDUPE_DAYS = 35
MAX_BATCH = 100
# An event name: what a price names its meter by, and part of the items' keys.
EVENT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,99}")
# A value DynamoDB can store and a sum of billions of them still can (38 significant
# digits): at most 6 decimal places, below 10^21.
MAX_DECIMALS = 6
MAX_VALUE = Decimal(10) ** 21
MAX_TEXT_VALUE = 200  # a unique_count meter's value may be text (a user id, a host name)


class EventRefused(ValueError):
    """A usage event that cannot be counted: ``reason`` (a stable code the API answers with),
    ``param`` (the field at fault) and a sentence for people."""

    def __init__(self, reason: str, param: str | None, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.param = param
        self.message = message


def check_event_name(name: Any) -> str:
    if not isinstance(name, str) or not EVENT_NAME.fullmatch(name):
        raise EventRefused("invalid_event_name", "event_name",
                           "event_name is 1-100 characters: lower-case letters, digits, '_', '.' or '-'.")
    return name


def event_moment(timestamp: Any, now: datetime) -> int:
    """The event's time, Unix seconds (whole), within 35 days back and 5 minutes ahead of ``now``."""
    if isinstance(timestamp, bool) or not isinstance(timestamp, int | Decimal):
        raise EventRefused("invalid_timestamp", "timestamp", "timestamp is a whole number of Unix seconds.")
    if isinstance(timestamp, Decimal) and (not timestamp.is_finite() or timestamp != timestamp.to_integral_value()):
        raise EventRefused("invalid_timestamp", "timestamp", "timestamp is a whole number of Unix seconds.")
    seconds = int(timestamp)
    if seconds < (now - MAX_AGE).timestamp():
        raise EventRefused("timestamp_too_old", "timestamp", "timestamp is more than 35 days in the past.")
    if seconds > (now + MAX_AHEAD).timestamp():
        raise EventRefused("timestamp_in_future", "timestamp", "timestamp is more than 5 minutes in the future.")
    return seconds


def day_of(seconds: int, timezone_name: str) -> str:
    """The day an event's aggregate is kept under: its calendar day in the billing time zone
    (``timezone_name``, ``BILLING_TIMEZONE``), the calendar a period's payment days are in.
    A period's payment closes the days before its payment day (``period_days``), so an event
    of a UTC day would be billed with the wrong period near midnight, and, east of UTC, one
    sent after the run on the payment day's first hours would be refused as already billed."""
    return billing_today(timezone_name, datetime.fromtimestamp(seconds, tz=UTC)).isoformat()


def event_value(raw: Any, aggregation: MeterAggregation) -> Decimal | str:
    """The value as it aggregates: a number (JSON number or numeric text) that DynamoDB can
    store, zero or more; for ``count`` it may be absent (1); for ``unique_count`` it may be
    text. Anything else is refused, naming ``value``."""
    if raw is None:
        if aggregation == MeterAggregation.COUNT:
            return Decimal(1)
        raise EventRefused("missing_value", "value", "value is required by this meter.")
    if aggregation == MeterAggregation.UNIQUE_COUNT and isinstance(raw, str):
        if not 0 < len(raw) <= MAX_TEXT_VALUE or not raw.isprintable():
            raise EventRefused("invalid_value", "value", f"value is 1-{MAX_TEXT_VALUE} printable characters.")
        return raw
    return _number(raw)


def _number(raw: Any) -> Decimal:
    if isinstance(raw, bool) or not isinstance(raw, int | Decimal | str):
        raise EventRefused("invalid_value", "value", "value is not a number.")
    try:
        number = Decimal(raw.strip()) if isinstance(raw, str) else Decimal(raw)
    except (InvalidOperation, ValueError):
        raise EventRefused("invalid_value", "value", "value is not a number.") from None
    if not number.is_finite():
        raise EventRefused("invalid_value", "value", "value is not a finite number.")
    if number < 0:
        raise EventRefused("invalid_value", "value", "value is negative: usage is zero or more.")
    if number >= MAX_VALUE:
        raise EventRefused("invalid_value", "value", "value is too large (at most 10^21).")
    if number != number.quantize(Decimal(1).scaleb(-MAX_DECIMALS), rounding="ROUND_DOWN"):
        raise EventRefused("invalid_value", "value", f"value has more than {MAX_DECIMALS} decimal places.")
    # Canonical (1.500 -> 1.5, 0E-7 -> 0, 1E+1 -> 10), so equal values store, hash and
    # show alike.
    if not number:
        return Decimal(0)
    number = number.normalize()
    return number.quantize(Decimal(1)) if number.as_tuple().exponent > 0 else number


def period_days(start: date, end: date) -> tuple[str, str]:
    """The first and last billing day of a period ``[start, end)``, as the aggregates' keys name them."""
    if end <= start:
        raise ValueError("a period ends after it starts")
    return start.isoformat(), (end - timedelta(days=1)).isoformat()


# --- merging ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partial:
    """What one aggregate item (a day, a shard) holds, or the merge of several."""

    events: int = 0
    sum: Decimal = Decimal(0)
    max: Decimal | None = None
    last: Decimal | None = None
    last_at: tuple[int, str] | None = None  # (timestamp, identifier): the latest event's

    @classmethod
    def of_event(cls, value: Decimal, timestamp: int, identifier: str) -> Partial:
        return cls(events=1, sum=value, max=value, last=value, last_at=(timestamp, identifier))


EMPTY = Partial()


def combine(a: Partial, b: Partial) -> Partial:
    """Two partials as one: events and sums add, the larger max, the later last (ties of a
    second broken by the identifier, so the outcome never depends on arrival order)."""
    if a.max is None:
        high = b.max
    elif b.max is None:
        high = a.max
    else:
        high = max(a.max, b.max)
    later = a if b.last_at is None or (a.last_at is not None and a.last_at >= b.last_at) else b
    return Partial(events=a.events + b.events, sum=a.sum + b.sum, max=high, last=later.last, last_at=later.last_at)


def merge(partials: list[Partial]) -> Partial:
    total = EMPTY
    for part in partials:
        total = combine(total, part)
    return total


def quantity(aggregation: MeterAggregation, total: Partial, distinct: int = 0) -> int | Decimal:
    """The period's usage by the meter's aggregation (0 without events); ``distinct`` is the
    count of distinct values read for a unique_count meter."""
    if aggregation == MeterAggregation.COUNT:
        return total.events
    if aggregation == MeterAggregation.UNIQUE_COUNT:
        return distinct
    if aggregation == MeterAggregation.SUM:
        return total.sum
    if aggregation == MeterAggregation.MAX:
        return total.max if total.max is not None else Decimal(0)
    return total.last if total.last is not None else Decimal(0)


def expected(aggregation: MeterAggregation, events: list[tuple[Decimal | str, int, str]]) -> int | Decimal:
    """The usage of a list of distinct events ``(value, timestamp, identifier)`` by definition,
    straight from the events: what the tests hold the merged aggregates to."""
    if not events:
        return 0 if aggregation in (MeterAggregation.COUNT, MeterAggregation.UNIQUE_COUNT) else Decimal(0)
    if aggregation == MeterAggregation.COUNT:
        return len(events)
    if aggregation == MeterAggregation.UNIQUE_COUNT:
        return len({value for value, _, _ in events})
    numbers = [Decimal(value) for value, _, _ in events]
    if aggregation == MeterAggregation.SUM:
        return sum(numbers, Decimal(0))
    if aggregation == MeterAggregation.MAX:
        return max(numbers)
    return Decimal(max(events, key=lambda e: (e[1], e[2]))[0])
