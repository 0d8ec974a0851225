"""Receipt numbers without gaps: ``R-<year>-S<series>-<n>``, each series 1, 2, 3...

A number is taken *inside* the TransactWriteItems that writes its document (the receipt,
or a credit note: billing/access/credit_notes.py): the transaction's first item moves the
series' counter from the value read to the next one, on condition it still holds that
value (``LastNumber = :seen``). The number thus exists only if its document does: a
payment that fails after its number was drawn, a worker killed mid-run, a retried
payment whose receipt is there already: each cancels the whole transaction, counter
included, and no number is lost. A writer that took the number first makes the other's
condition fail: that one takes the counter's value from the refusal
(``ReturnValuesOnConditionCheckFailure``), so no read of its own, and tries again with
the next number (bounded, with a jittered pause).

One counter item takes ~1,000 writes a second, and writers on one series take turns: so
there are ``settings.RECEIPT_NUMBER_SERIES`` series (default 16), each with its own counter
item per year. A thread keeps one series (a payment run's workers start on different
ones) and remembers the last value it wrote, so its next payment draws the right number
without a read: two requests per payment, as before the series. A thread that lost a
race moves to another series at random, so two runs at once soon stop meeting.

Numbers issued before the series (``R-2026-000123``, blocks reserved on one counter
per year) stay valid: ``is_receipt_number`` accepts both shapes.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pynamodb.exceptions import DoesNotExist, TransactWriteError

from billing.access._common import is_conditional_failure, transact_with_retries
from billing.exceptions import ConditionFailed
from billing.models import BillingItem, CreditNoteCounter, ReceiptCounter

# Six digits at least (``R-2026-S07-000123``), nine at most: a series refuses to go past
# them, so every number ever issued matches the pattern a URL is checked against.
NUMBER_DIGITS = 6
MAX_NUMBER = 999_999_999
# Two digits of series: at most 100 of them.
MAX_SERIES = 100
RECEIPT_NUMBER = re.compile(r"R-(?P<year>[0-9]{4})-(?:S(?P<series>[0-9]{2})-)?(?P<seq>[0-9]{6,9})")
# How often a number is drawn again after another writer took it first: with more
# writers than series, a thread may lose several races in a row before it moves away.
ATTEMPTS = 40


class SeriesBusy(RuntimeError):
    """Every attempt met another writer on the counter (far more writers than series)."""


def format_number(prefix: str, year: int, series: int | None, seq: int) -> str:
    """``<prefix>-<year>-S<series>-<seq>``; without ``series``, the shape of the numbers
    issued before the series."""
    middle = f"S{series:02d}-" if series is not None else ""
    return f"{prefix}-{year:04d}-{middle}{seq:0{NUMBER_DIGITS}d}"


def format_receipt_number(year: int, seq: int, series: int | None = None) -> str:
    return format_number("R", year, series, seq)


def is_receipt_number(text: str) -> bool:
    """Whether ``text`` has the shape of a receipt number, of a series or from before the
    series (checked before any key is built)."""
    return bool(RECEIPT_NUMBER.fullmatch(text))


def series_count() -> int:
    return max(1, min(int(settings.RECEIPT_NUMBER_SERIES), MAX_SERIES))


@dataclass(frozen=True)
class Draw:
    """The number a transaction is about to take: ``seen + 1`` of ``series``."""

    year: int
    series: int
    seen: int
    known: bool  # ``seen`` was read from or written to the counter (else a first guess: 0)


class NumberSeries:
    """Draws numbers of one kind of document (``prefix``, ``counter``: its model) for the
    transactions that take them (``write_numbered``). Thread-safe: a payment run's workers
    share one; each thread keeps a series of its own while it wins its races."""

    def __init__(self, prefix: str, counter: type[ReceiptCounter] | type[CreditNoteCounter]) -> None:
        self.prefix = prefix
        self.counter = counter
        self._lock = threading.Lock()
        self._slots = iter(range(random.randrange(MAX_SERIES), 1 << 62))  # first series of the next thread
        self._home: dict[int, int] = {}  # thread -> slot (its series: slot % series_count())
        # (table, year, series) -> the counter's last value this object saw or wrote.
        self._last: dict[tuple[str, str | None, int, int], int] = {}

    def _cache_key(self, year: int, series: int) -> tuple[str, str | None, int, int]:
        # A process may meet several tables (the tests make one each): never mix their counters.
        return BillingItem.Meta.table_name, BillingItem.Meta.host, year, series

    def draw(self, year: int) -> Draw:
        """The next number of this thread's series, as far as this object knows."""
        with self._lock:
            thread = threading.get_ident()
            if thread not in self._home:
                self._home[thread] = next(self._slots)
            series = self._home[thread] % series_count()
            seen = self._last.get(self._cache_key(year, series))
        if seen is not None and seen >= MAX_NUMBER:
            raise ConditionFailed(self.counter.pk(year=year, series=f"{series:02d}"))  # the series' year is spent
        return Draw(year, series, seen or 0, known=seen is not None)

    def number(self, draw: Draw) -> str:
        return format_number(self.prefix, draw.year, draw.series, draw.seen + 1)

    def take(self, tx: Any, draw: Draw) -> None:
        """Add the counter's move to ``tx``: from ``draw.seen`` to the next number, only if
        it still holds ``draw.seen``; refused, DynamoDB answers with the item as it is."""
        key = self.counter.pk(year=draw.year, series=f"{draw.series:02d}")
        counter = self.counter(key, key)
        held = self.counter.LastNumber == draw.seen
        if draw.seen == 0:
            held = self.counter.LastNumber.does_not_exist() | held
        tx.update(counter, actions=[self.counter.LastNumber.set(draw.seen + 1),
                                    # The transaction creates the item on first use: give it its type.
                                    self.counter.EntityType.set(self.counter)],
                  condition=held, return_values="ALL_OLD")

    def taken(self, draw: Draw) -> None:
        """``draw``'s transaction was written: the series now stands at its number."""
        with self._lock:
            key = self._cache_key(draw.year, draw.series)
            self._last[key] = max(self._last.get(key, 0), draw.seen + 1)

    def read(self, draw: Draw) -> int:
        """What ``draw``'s counter holds now: one consistent GetItem."""
        key = self.counter.pk(year=draw.year, series=f"{draw.series:02d}")
        try:
            return int(self.counter.get(key, key, consistent_read=True).LastNumber)
        except DoesNotExist:
            return 0

    def refused(self, draw: Draw, current: int, *, move: bool) -> None:
        """The counter held ``current``, not ``draw.seen``: remember it; ``move``: another
        writer took the number, so this thread moves to another series."""
        with self._lock:
            self._last[self._cache_key(draw.year, draw.series)] = current
            if move and series_count() > 1:
                self._home[threading.get_ident()] = random.randrange(MAX_SERIES * series_count())


class ReceiptNumbers(NumberSeries):
    """Receipt numbers (``R-<year>-S<nn>-<n>``): a payment run makes one for its workers;
    a receipt written on its own uses the process's (``RECEIPT_NUMBERS``)."""

    def __init__(self) -> None:
        super().__init__("R", ReceiptCounter)


RECEIPT_NUMBERS = ReceiptNumbers()


def _first_update_index(tx: Any) -> int:
    """Where a transaction's first update stands in its request (and so in its refusal's
    reasons): PynamoDB sends the condition checks, the deletes, the puts, then the updates,
    each kind in the order it was added."""
    return len(tx._condition_check_items) + len(tx._delete_items) + len(tx._put_items)


def _counter_refusal(numbers: NumberSeries, draw: Draw, error: TransactWriteError,
                     index: int) -> tuple[int | None, bool]:
    """(what the counter, the transaction's item ``index``, holds if it was refused, else
    None; whether any other item was refused)."""
    reasons = error.cancellation_reasons or []
    refused = [r is not None and r.code == "ConditionalCheckFailed" for r in reasons]
    other = any(flag for n, flag in enumerate(refused) if n != index)
    if index < len(refused) and refused[index]:
        item = reasons[index].raw_item  # type: ignore[union-attr]
        current = int(item.get("LastNumber", {}).get("N", 0)) if item is not None else numbers.read(draw)
        return current, other
    if other:
        # DynamoDB may stop at the first item refused (the puts come before the counter's
        # update) and say nothing of the rest: a look-up item refused may be a number
        # taken meanwhile. Whether the counter still holds the value drawn, one read says.
        current = numbers.read(draw)
        return (current if current != draw.seen else None), other
    return None, other


def write_numbered(numbers: NumberSeries, year: int, write: Callable[[Any, str], None],
                   attempts: int = ATTEMPTS, numbered: tuple[int, ...] = ()) -> str:
    """Run ``write(tx, number)`` in one TransactWriteItems whose first item takes ``number``
    from ``numbers`` (a series of ``year``), so the number exists only if the write does;
    returns the number. ``write`` is called again for each attempt (it builds its items
    from the number). The counter did not hold the value drawn (another writer took the
    number first, or this object had not seen the counter yet): drawn again, after a short
    jittered pause. A refusal of the caller's own conditions alone (the counter is the
    transaction's first update, so the caller's puts keep their indexes among the reasons)
    or any error is raised as it came, and the counter stays as it was. ``numbered``: the
    indexes of the caller's items whose condition is on the number (a look-up item keyed by
    it): refused while the counter reads as drawn, the write is tried again a few times
    before the refusal is raised (a store whose transactions are not isolated from reads,
    as DynamoDB Local's, can show another's look-up item before its counter)."""
    unexplained = 0
    for attempt in range(attempts):
        draw = numbers.draw(year)
        number = numbers.number(draw)
        where = [0]

        def body(tx: Any, draw: Draw = draw, number: str = number, where: list[int] = where) -> None:
            numbers.take(tx, draw)  # the first update, whatever ``write`` adds
            write(tx, number)
            where[0] = _first_update_index(tx)

        try:
            transact_with_retries(body)
        except TransactWriteError as error:
            current, other = (None, False) if not is_conditional_failure(error) else \
                _counter_refusal(numbers, draw, error, where[0])
            counter = current is not None
            reasons = error.cancellation_reasons or []
            if not counter and unexplained < 3 and any(
                    n < len(reasons) and reasons[n] is not None and reasons[n].code == "ConditionalCheckFailed"
                    for n in numbered):
                unexplained += 1
                counter = True  # drawn again: the counter is read on the next refusal
            if current is not None:
                # Only a race lost moves the thread on: a first guess just learns the
                # counter's value. A race is lost even when the caller's own condition
                # failed too: staying would meet the same faster writer on every attempt
                # (a receipt another run wrote, refused forty times over, and SeriesBusy).
                numbers.refused(draw, current, move=draw.known)
            # Refused with the counter, a condition of the caller's may only say the number
            # was wrong (its look-up item is another's): try again with the counter's value,
            # and a refusal of the caller's own comes back alone.
            if not counter:
                raise
            if attempt == attempts - 1:
                raise SeriesBusy(f"{numbers.prefix} {year}: no number after {attempts} attempts") from error
            time.sleep(random.uniform(0.0, 0.005) * 2 ** min(attempt, 5))
            continue
        numbers.taken(draw)
        return number
    raise AssertionError("unreachable")
