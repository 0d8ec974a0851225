"""Receipt numbers: ``R-<year>-<n>``, sequential per seller and year, never reused.

A number comes from the year's ``ReceiptCounter`` item, moved on by an atomic UpdateItem
ADD: two processes never get the same number. At scale (millions of payments on one
day, and one DynamoDB item takes about 1,000 writes a second) a batch does not write
the counter once per receipt: a ``ReceiptNumbers`` reserves a *block* of numbers with one
update and hands them out one by one. Numbers a process reserved and did not use
(it stopped, crashed, or its run ended mid-block; a retried payment that found its
receipt already written) are gaps: never handed out again. A receipt's number is
therefore unique and increasing within a process, but two workers holding two blocks
interleave: numbers follow reservation order, not the exact second of payment.
"""

from __future__ import annotations

import re
import threading

from billing.access._common import refused_as
from billing.exceptions import ConditionFailed
from billing.models import ReceiptCounter

# Six digits at least (``R-2026-000123``), nine at most: the counter refuses to go past
# them, so every number ever issued matches the pattern a URL is checked against.
NUMBER_DIGITS = 6
MAX_NUMBER = 999_999_999
RECEIPT_NUMBER = re.compile(r"R-(?P<year>[0-9]{4})-(?P<seq>[0-9]{6,9})")


def format_receipt_number(year: int, seq: int) -> str:
    return f"R-{year:04d}-{seq:0{NUMBER_DIGITS}d}"


def is_receipt_number(text: str) -> bool:
    """Whether ``text`` has the shape of a receipt number (checked before any key is built)."""
    return bool(RECEIPT_NUMBER.fullmatch(text))


def reserve_receipt_numbers(year: int, count: int) -> int:
    """Reserve ``count`` numbers of ``year`` with one UpdateItem ADD; returns the last one
    (the block is ``last - count + 1 .. last``). Conditional on the counter staying
    within ``MAX_NUMBER`` (ConditionFailed past it: the year's numbers are spent)."""
    if count < 1:
        raise ValueError("reserve at least one number")
    key = ReceiptCounter.pk(year=year)
    counter = ReceiptCounter(key, key)
    room = ReceiptCounter.LastNumber.does_not_exist() | (ReceiptCounter.LastNumber <= MAX_NUMBER - count)
    with refused_as(ConditionFailed, key):
        counter.update(
            actions=[ReceiptCounter.LastNumber.add(count),
                     # An UpdateItem creates the item on first use: give it its type.
                     ReceiptCounter.EntityType.set(ReceiptCounter)],
            condition=room,
        )
    return int(counter.LastNumber)


class ReceiptNumbers:
    """Hands out receipt numbers from blocks of ``block_size`` reserved on the counter
    (thread-safe: a batch's workers share one). ``block_size=1`` reserves one number per
    receipt: no gaps but one UpdateItem each, for receipts made one at a time."""

    def __init__(self, block_size: int = 1) -> None:
        if block_size < 1:
            raise ValueError("block_size must be at least 1")
        self.block_size = block_size
        self._lock = threading.Lock()
        self._blocks: dict[int, tuple[int, int]] = {}  # year -> (next to hand out, last reserved)

    def next_number(self, year: int) -> str:
        with self._lock:
            upcoming, last = self._blocks.get(year, (1, 0))
            if upcoming > last:
                # Under the lock: the other workers wait for this one update per block.
                last = reserve_receipt_numbers(year, self.block_size)
                upcoming = last - self.block_size + 1
            self._blocks[year] = (upcoming + 1, last)
        return format_receipt_number(year, upcoming)
