"""The periods the figures are cut into (day, month, quarter, year) and the range a caller
asks for (``from`` and ``to`` as ``YYYY-MM``). Pure: no I/O.

A period closes on its last day, or today when it is still under way: the same close the
staff page gives its months, so the API's monthly rows are the page's rows.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

from billing.rules.schedule import add_months

MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")
FIRST_YEAR = 2000
DEFAULT_MONTHS = 12  # the page's year of months
MAX_PERIODS = 400  # a year of days and some: beyond it a caller asks for too much at once


class Interval(StrEnum):
    DAY = "day"
    MONTH = "month"
    QUARTER = "quarter"
    YEAR = "year"


class BadRange(ValueError):
    """A range a caller cannot have: ``field`` names what is wrong (``from``, ``to``, ``interval``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Period:
    label: str  # 2027-01-05, 2027-01, 2027Q1, 2027
    first: date
    last: date
    close: date  # the last day, or today for the period under way


def month_of(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def month_first(month: str) -> date:
    return date(int(month[:4]), int(month[5:]), 1)


def month_last(month: str) -> date:
    year, number = int(month[:4]), int(month[5:])
    return date(year, number, calendar.monthrange(year, number)[1])


def shift_month(month: str, months: int) -> str:
    year, number = add_months(int(month[:4]), int(month[5:]), months)
    return f"{year:04d}-{number:02d}"


def label_of(day: date, interval: Interval) -> str:
    if interval == Interval.DAY:
        return day.isoformat()
    if interval == Interval.MONTH:
        return month_of(day)
    if interval == Interval.QUARTER:
        return f"{day.year:04d}Q{(day.month - 1) // 3 + 1}"
    return f"{day.year:04d}"


def bounds_of(day: date, interval: Interval) -> tuple[date, date]:
    """The first and last day of the period ``day`` falls in."""
    if interval == Interval.DAY:
        return day, day
    if interval == Interval.MONTH:
        return day.replace(day=1), month_last(month_of(day))
    if interval == Interval.QUARTER:
        first_month = (day.month - 1) // 3 * 3 + 1
        first = date(day.year, first_month, 1)
        return first, month_last(month_of(date(day.year, first_month + 2, 1)))
    return date(day.year, 1, 1), date(day.year, 12, 31)


def periods_between(first_day: date, last_day: date, interval: Interval, today: date) -> list[Period]:
    """The periods from the one holding ``first_day`` to the one holding ``last_day``,
    none starting after today."""
    found: list[Period] = []
    day = first_day
    while day <= last_day and day <= today:
        first, last = bounds_of(day, interval)
        found.append(Period(label_of(first, interval), first, last, min(last, today)))
        day = last + timedelta(days=1)
    return found


def parse_month(text: str | None, field: str, today: date) -> str | None:
    if text is None or text == "":
        return None
    match = MONTH.match(text)
    if not match or int(match.group(1)) < FIRST_YEAR:
        raise BadRange(field, f"{field} is not a month (YYYY-MM).")
    if text > month_of(today):
        raise BadRange(field, f"{field} is a month still to come.")
    return text


def parse_interval(text: str | None) -> Interval:
    try:
        return Interval(text or Interval.MONTH)
    except ValueError:
        raise BadRange("interval", "interval is one of day, month, quarter, year.") from None


def requested_periods(from_month: str | None, to_month: str | None, interval: str | None,
                      today: date) -> list[Period]:
    """The periods of a request: ``to`` defaults to the month under way, ``from`` to the
    eleventh month before ``to`` (the page's twelve months); each end widens to the whole
    period it falls in."""
    kind = parse_interval(interval)
    last = parse_month(to_month, "to", today) or month_of(today)
    first = parse_month(from_month, "from", today) or shift_month(last, 1 - DEFAULT_MONTHS)
    if first > last:
        raise BadRange("from", "from is after to.")
    found = periods_between(month_first(first), month_last(last), kind, today)
    if len(found) > MAX_PERIODS:
        raise BadRange("from", f"That range has {len(found)} periods; at most {MAX_PERIODS} at once.")
    return found
