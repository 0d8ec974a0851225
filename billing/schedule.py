"""Pure date rules: the anchor-day schedule, reminder dates and retry dates.

Nothing here reads settings, the clock or the database: callers pass everything in,
so the rules are easy to property-test (tests/test_schedule.py).

The anchor rule (DESIGN.md invariant 6): a subscription pays on its ``payment_day``
every month, clamped to the month's last day when the month is shorter. The clamp is
applied per month from the anchor, never from the previous (possibly clamped) date,
so day 31 bills Jan 31, Feb 28, Mar 31, Apr 30 and never drifts to the 28th.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

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


def start_dates(payment_day: int, today: date, days_before: int) -> tuple[date, date]:
    """The first payment and reminder dates of a subscription created ``today``.

    The first payment is the next occurrence of the payment day *after* today: today's
    payment run may already be over, and a date it has passed would never be taken.
    """
    payment = first_payment_date(payment_day, today + timedelta(days=1))
    return payment, reminder_date(payment, days_before, today)


def rescheduled_payment_date(
    new_payment_day: int, unpaid_period: date, today: date
) -> date:
    """The next payment date after the customer changes the payment day.

    ``unpaid_period`` is the anchor date of the first period not yet paid (the current
    ``NextPaymentDate``, or the period being retried). The new day is taken in that
    period's month, or in the following month if that date is not after today: so a
    month is never charged twice, and no date today's run may have passed is chosen.
    """
    candidate = anchor_date(unpaid_period.year, unpaid_period.month, new_payment_day)
    if candidate <= today:
        return next_payment_date(new_payment_day, max(candidate, today))
    return candidate


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


def billing_today(timezone_name: str, now: datetime | None = None) -> date:
    """Today's calendar date in the billing time zone (DESIGN.md invariant 7)."""
    now = now or datetime.now(tz=ZoneInfo("UTC"))
    return now.astimezone(ZoneInfo(timezone_name)).date()


def months_before(today: date, months: int) -> date:
    """The same day ``months`` calendar months earlier, clamped to that month's end.

    The receipt window is ``months_before(today, 6)`` to today: at most 184 days,
    which ``RECEIPT_RETENTION_DAYS`` (default 200) always covers.
    """
    year, month = add_months(today.year, today.month, -months)
    return date(year, month, min(today.day, calendar.monthrange(year, month)[1]))
