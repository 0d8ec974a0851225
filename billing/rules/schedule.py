"""Pure date rules: the anchor-day schedule, reminder dates and retry dates.

Nothing here reads settings, the clock or the database: callers pass everything in,
so the rules are easy to property-test (tests/billing/test_schedule.py).

The anchor rule (docs/TABLE.md, "The schedule keeps its anchor"): a subscription pays on its ``payment_day``
every month, clamped to the month's last day when the month is shorter. The clamp is
applied per month from the anchor, never from the previous (possibly clamped) date,
so day 31 bills Jan 31, Feb 28, Mar 31, Apr 30 and never drifts to the 28th.

Cadences (docs/MONEY.md "Cadences"): a subscription renews every N days, weeks, months or
years. Every schedule function takes a ``Schedule``: a bare payment day (``int``) is the
monthly cadence on that day, as before; a ``Cadence`` says the rest. Months and years are
counted from the anchor's month and each date is clamped from the payment day, so a
yearly 29 February bills 28 February in other years and 29 February again in leap years;
weeks and days are counted from the anchor date (every N weeks keeps its weekday).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

# One unit list and one limit (Stripe's: three years) for prices and schedules.
from billing.rules.pricing import MAX_INTERVAL_COUNT, Interval

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


@dataclass(frozen=True)
class Cadence:
    """When a subscription renews: every ``count`` intervals (days, weeks, months, years).

    Months and years: on ``payment_day`` (clamped to the month's end), in the months
    ``count`` (years: ``12 * count``) apart counted from ``anchor``'s month. Weeks and
    days: ``anchor`` and every ``7 * count`` / ``count`` days before and after it
    (``payment_day`` is not used). ``anchor`` is the first full period's first day; the
    plain monthly cadence needs none (every month is one of its months)."""

    payment_day: int
    interval: Interval = Interval.MONTH
    count: int = 1
    anchor: date | None = None

    def __post_init__(self) -> None:
        interval = Interval(self.interval)
        object.__setattr__(self, "interval", interval)
        check_payment_day(self.payment_day)
        if not 1 <= self.count <= MAX_INTERVAL_COUNT[interval]:
            raise ValueError(f"every {self.count} {interval}s is out of range")
        if self.anchor is None and not self.is_monthly:
            raise ValueError(f"every {self.count} {interval}s needs an anchor date")

    @property
    def is_monthly(self) -> bool:
        """Today's plain monthly schedule (the default of every item written before cadences)."""
        return self.interval == Interval.MONTH and self.count == 1

    @property
    def has_payment_day(self) -> bool:
        """Months and years fall on a day of the month, which a customer may change."""
        return self.months > 0

    @property
    def months(self) -> int:
        """Calendar months from one date to the next; 0 for weeks and days."""
        return {Interval.MONTH: self.count, Interval.YEAR: 12 * self.count}.get(self.interval, 0)

    @property
    def days(self) -> int:
        """Days from one date to the next for weeks and days; 0 for months and years."""
        return {Interval.DAY: self.count, Interval.WEEK: 7 * self.count}.get(self.interval, 0)

    @property
    def min_period_days(self) -> int:
        """The shortest regular period: 28 days a month (February), else the fixed step."""
        return MIN_PERIOD_DAYS * self.months if self.months else self.days


# What the schedule functions take: a payment day (monthly) or a cadence.
Schedule = int | Cadence


def as_cadence(schedule: Schedule) -> Cadence:
    return schedule if isinstance(schedule, Cadence) else Cadence(int(schedule))


def new_cadence(payment_day: int, start: date, interval: Interval | str | None = None,
                count: int | None = None) -> Cadence:
    """The cadence of a subscription whose first charge is on ``start`` (today, or the
    day after a free trial): months and years are anchored on the first ``payment_day``
    on or after ``start`` (its month is the anniversary month), weeks and days on
    ``start`` itself (its weekday)."""
    interval = Interval(interval or Interval.MONTH)
    count = int(count or 1)
    if interval in (Interval.MONTH, Interval.YEAR):
        anchor = None if interval == Interval.MONTH and count == 1 else first_payment_date(payment_day, start)
        return Cadence(payment_day, interval, count, anchor)
    return Cadence(payment_day, interval, count, start)


def cadence_of(sub: Any) -> Cadence:
    """A subscription's cadence from its attributes (``PaymentDay``, ``Interval`` (null:
    month), ``IntervalCount`` (null: 1), ``IntervalAnchor``), all projected by both due
    indexes, so a batch needs no other read."""
    anchor = getattr(sub, "IntervalAnchor", None)
    return Cadence(int(sub.PaymentDay), Interval(getattr(sub, "Interval", None) or Interval.MONTH),
                   int(getattr(sub, "IntervalCount", None) or 1), date.fromisoformat(anchor) if anchor else None)


def _date_on_or_before(cadence: Cadence, day: date) -> date:
    """The latest date of the cadence that is not after ``day``."""
    if cadence.months:
        anchor = cadence.anchor or day
        origin = anchor.year * 12 + anchor.month - 1
        steps = (day.year * 12 + day.month - 1 - origin) // cadence.months
        year, month = add_months(anchor.year, anchor.month, steps * cadence.months)
        found = anchor_date(year, month, cadence.payment_day)
        if found > day:
            found = _shift(cadence, found, -1)
        return found
    assert cadence.anchor is not None
    return cadence.anchor + timedelta(days=(day - cadence.anchor).days // cadence.days * cadence.days)


def _shift(cadence: Cadence, on: date, steps: int) -> date:
    """The date ``steps`` periods from ``on``, itself a date of the cadence."""
    if cadence.months:
        year, month = add_months(on.year, on.month, steps * cadence.months)
        return anchor_date(year, month, cadence.payment_day)
    return on + timedelta(days=steps * cadence.days)


def first_payment_date(payment_day: Schedule, today: date) -> date:
    """The next occurrence of the payment day on or after ``today``.

    A customer who subscribes on the 15th with payment day 15 pays today; with
    payment day 10 they pay on the 10th of next month.
    """
    if not isinstance(payment_day, Cadence):
        this_month = anchor_date(today.year, today.month, payment_day)
        if this_month >= today:
            return this_month
        year, month = add_months(today.year, today.month, 1)
        return anchor_date(year, month, payment_day)
    found = _date_on_or_before(payment_day, today)
    return found if found == today else _shift(payment_day, found, 1)


def next_payment_date(payment_day: Schedule, after: date) -> date:
    """The first anchor date strictly after ``after`` (the period after the one paid)."""
    cadence = as_cadence(payment_day)
    return _shift(cadence, _date_on_or_before(cadence, after), 1)


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


# --- reminders by cadence: which payments are announced, and how far ahead ---
# (docs/MONEY.md "Reminders by cadence")

# A renewal is announced only when its period is at least a month long (Stripe's habit
# too): a reminder "7 days before" a daily or weekly payment would be an e-mail for every
# payment, each arriving before the previous payment was even taken.
REMINDED_PERIOD_DAYS = MIN_PERIOD_DAYS
# A renewal a year or more apart is announced at least this many days ahead: the customer
# has forgotten the plan in a year, and laws on annual auto-renewal ask for 15 to 45 days'
# notice; 30 leaves time to cancel before the charge.
LONG_PERIOD_REMINDER_DAYS = 30


def reminder_days(schedule: Schedule, days_before: int) -> int | None:
    """How many days before a renewal of this cadence its reminder falls: None for a
    period shorter than a month (no renewal reminder), at least
    ``LONG_PERIOD_REMINDER_DAYS`` for a year or more, else ``days_before``
    (``REMINDER_DAYS_BEFORE``)."""
    cadence = as_cadence(schedule)
    if cadence.min_period_days < REMINDED_PERIOD_DAYS:
        return None
    if cadence.months >= 12:
        return max(days_before, LONG_PERIOD_REMINDER_DAYS)
    return days_before


def renewal_reminder(schedule: Schedule, payment: date, days_before: int, today: date, *,
                     ends_trial: bool = False) -> date | None:
    """When to remind about ``payment`` at this cadence (``reminder_date`` with
    ``reminder_days``), or None: not reminded. The first charge after a free trial is
    always announced (``days_before`` ahead when the cadence has no renewal reminder): the
    customer has paid nothing yet and must hear that it starts."""
    days = reminder_days(schedule, days_before)
    if days is None:
        if not ends_trial:
            return None
        days = days_before
    return reminder_date(payment, days, today)


def anchor_on_or_before(payment_day: Schedule, day: date) -> date:
    """The latest anchor date of ``payment_day`` that is not after ``day``."""
    return _date_on_or_before(as_cadence(payment_day), day)


def is_anchor(payment_day: Schedule, day: date) -> bool:
    return anchor_on_or_before(payment_day, day) == day


def first_period(payment_day: Schedule, today: date) -> tuple[date, date]:
    """The days the charge at subscribing pays for: from ``today`` to the day before the
    first anchor date after it (a prorated period), or a full period when ``today`` is
    itself an anchor date."""
    if is_anchor(payment_day, today):
        return today, period_end(payment_day, today)
    return today, next_payment_date(payment_day, today) - timedelta(days=1)


def period_end(payment_day: Schedule, start: date) -> date:
    """The last day a charge starting on ``start`` pays for: the day before the first
    anchor date at least ``MIN_PERIOD_DAYS`` after ``start``.

    From an anchor date that is the next anchor (a regular month). From any other day
    (the first payment after a change of payment day) it is the prorated days up to the
    new day *plus* the full month after them, so that no period is shorter than 28 days
    and a catch-up run never meets the same subscription twice. Other cadences: at least
    their shortest regular period (``Cadence.min_period_days``: 28 days a month, 336 a
    year, 7 a week), so from one of their dates it is the next one.
    """
    days = as_cadence(payment_day).min_period_days
    return first_payment_date(payment_day, start + timedelta(days=days)) - timedelta(days=1)


def prorate(price: int, days: int, period_days: int) -> int:
    """``price * days / period_days`` in minor units, rounded half up (integers only)."""
    if days == period_days:
        return price
    return (2 * price * days + period_days) // (2 * period_days)


def period_amount(price: int, payment_day: Schedule, start: date, end: date) -> int:
    """What the days ``start``..``end`` (inclusive) cost at ``price`` a period of the
    cadence (a month on ``payment_day``): each anchor period they cover in full costs ``price``; a part of an
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


def payment_dates(payment_day: Schedule, start: date) -> Iterator[date]:
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


def charges_paying_from(payment_day: Schedule, today: date) -> date:
    """The earliest billing date of a charge that may still pay for days after ``today``:
    a charge pays for at most the prorated days plus one regular period (``period_end``),
    so two of the cadence's longest periods back; never later than three months back
    (the monthly window the callers always read)."""
    cadence = as_cadence(payment_day)
    if cadence.months:
        back = months_before(today, 2 * cadence.months + 1)
    else:
        back = today - timedelta(days=2 * cadence.days + 1)
    return min(back, months_before(today, 3))
