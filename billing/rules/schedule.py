"""Pure date rules: the anchor-day schedule, reminder dates and retry dates.

Nothing here reads settings, the clock or the database: callers pass everything in,
so the rules are easy to property-test (tests/billing/test_schedule.py).

The anchor rule (docs/TABLE.md, "The schedule keeps its anchor"): a subscription pays on its ``payment_day``
every month, clamped to the month's last day when the month is shorter. The clamp is
applied per month from the anchor, never from the previous (possibly clamped) date,
so day 31 bills Jan 31, Feb 28, Mar 31, Apr 30 and never drifts to the 28th.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator, Sequence
from datetime import date, timedelta

MIN_PAYMENT_DAY = 1
MAX_PAYMENT_DAY = 31


def check_payment_day(payment_day: int) -> int:
    if not MIN_PAYMENT_DAY <= payment_day <= MAX_PAYMENT_DAY:
        raise ValueError(f"payment day must be 1-31, not {payment_day}")
    return payment_day


def anchor_date(year: int, month: int, payment_day: int) -> date:
    """The billing date of ``payment_day`` in that month, clamped to the month's end."""
    check_payment_day(payment_day)
    last_day = calendar.monthrange(year, month)[1]
    return date(year, month, min(payment_day, last_day))


def add_months(year: int, month: int, months: int) -> tuple[int, int]:
    """``(year, month)`` moved by ``months`` calendar months (negative: back)."""
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1


def first_payment_date(payment_day: int, today: date) -> date:
    """The next occurrence of the payment day on or after ``today``.

    A customer who subscribes on the 15th with payment day 15 pays today; with
    payment day 10 they pay on the 10th of next month.
    """
    this_month = anchor_date(today.year, today.month, payment_day)
    if this_month >= today:
        return this_month
    year, month = add_months(today.year, today.month, 1)
    return anchor_date(year, month, payment_day)


def next_payment_date(payment_day: int, after: date) -> date:
    """The first anchor date strictly after ``after`` (the period after the one paid)."""
    candidate = first_payment_date(payment_day, after)
    if candidate > after:
        return candidate
    year, month = add_months(after.year, after.month, 1)
    return anchor_date(year, month, payment_day)


def reminder_date(payment: date, days_before: int, today: date) -> date:
    """When to remind about ``payment``: ``days_before`` days earlier, but never before
    tomorrow (today's reminder run may already be over, and a date it has passed would
    never be sent) and never after the payment itself. The one reminder rule: new
    subscriptions, changed days and the batches all use it.
    """
    remind = payment - timedelta(days=days_before)
    return max(remind, min(today + timedelta(days=1), payment))


# --- periods: what one charge pays for (docs/MONEY.md M1 and "Periods and rounding") ---

# A regular period runs from one anchor date to the day before the next: at least 28 days.
MIN_PERIOD_DAYS = 28


def anchor_on_or_before(payment_day: int, day: date) -> date:
    """The latest anchor date of ``payment_day`` that is not after ``day``."""
    this_month = anchor_date(day.year, day.month, payment_day)
    if this_month <= day:
        return this_month
    year, month = add_months(day.year, day.month, -1)
    return anchor_date(year, month, payment_day)


def is_anchor(payment_day: int, day: date) -> bool:
    return anchor_date(day.year, day.month, payment_day) == day


def first_period(payment_day: int, today: date) -> tuple[date, date]:
    """The days the charge at subscribing pays for: from ``today`` to the day before the
    first anchor date after it (a prorated period), or a full period when ``today`` is
    itself an anchor date."""
    if is_anchor(payment_day, today):
        return today, period_end(payment_day, today)
    return today, next_payment_date(payment_day, today) - timedelta(days=1)


def period_end(payment_day: int, start: date) -> date:
    """The last day a charge starting on ``start`` pays for: the day before the first
    anchor date at least ``MIN_PERIOD_DAYS`` after ``start``.

    From an anchor date that is the next anchor (a regular month). From any other day
    (the first payment after a change of payment day) it is the prorated days up to the
    new day *plus* the full month after them, so that no period is shorter than 28 days
    and a catch-up run never meets the same subscription twice.
    """
    return first_payment_date(payment_day, start + timedelta(days=MIN_PERIOD_DAYS)) - timedelta(days=1)


def prorate(price: int, days: int, period_days: int) -> int:
    """``price * days / period_days`` in minor units, rounded half up (integers only)."""
    if days == period_days:
        return price
    return (2 * price * days + period_days) // (2 * period_days)


def period_amount(price: int, payment_day: int, start: date, end: date) -> int:
    """What the days ``start``..``end`` (inclusive) cost at ``price`` a month on
    ``payment_day``: each anchor period they cover in full costs ``price``; a part of an
    anchor period costs its days' share of it, rounded half up (``prorate``)."""
    if end < start:
        raise ValueError(f"empty period {start}..{end}")
    total = 0
    cursor = start
    while cursor <= end:
        anchor = anchor_on_or_before(payment_day, cursor)
        following = next_payment_date(payment_day, anchor)
        segment_end = min(end, following - timedelta(days=1))
        total += prorate(price, (segment_end - cursor).days + 1, (following - anchor).days)
        cursor = segment_end + timedelta(days=1)
    return total


def payment_dates(payment_day: int, start: date) -> Iterator[date]:
    """Every billing date from ``start`` on (first one on or after ``start``)."""
    current = first_payment_date(payment_day, start)
    while True:
        yield current
        current = next_payment_date(payment_day, current)


def retry_dates(billing_date: date, retry_days: Sequence[int]) -> list[date]:
    """The dates a declined payment is tried again (``PAYMENT_RETRY_DAYS`` after it)."""
    return [billing_date + timedelta(days=d) for d in sorted(set(retry_days)) if d > 0]


def next_retry_date(
    billing_date: date, retry_days: Sequence[int], attempts_made: int
) -> date | None:
    """The retry after ``attempts_made`` failed retries, or None when none is left."""
    dates = retry_dates(billing_date, retry_days)
    return dates[attempts_made] if attempts_made < len(dates) else None


def retry_after(run_date: date, retry_days: Sequence[int], failed_retries: int) -> date | None:
    """The next retry of a declined period, counted from the real run date (docs/MONEY.md
    M3): the gap between two ``PAYMENT_RETRY_DAYS`` entries, at least one day after
    ``run_date``; None when no retry is left. ``failed_retries`` counts the failed
    attempts after the first one, so 0 after the first decline."""
    days = sorted({d for d in retry_days if d > 0})
    if failed_retries >= len(days):
        return None
    gap = days[0] if failed_retries == 0 else days[failed_retries] - days[failed_retries - 1]
    return run_date + timedelta(days=max(1, gap))


def months_before(today: date, months: int) -> date:
    """The same day ``months`` calendar months earlier, clamped to that month's end.

    The receipt window is ``months_before(today, 6)`` to today: at most 184 days,
    which ``RECEIPT_RETENTION_DAYS`` (default 200) always covers.
    """
    year, month = add_months(today.year, today.month, -months)
    return date(year, month, min(today.day, calendar.monthrange(year, month)[1]))
