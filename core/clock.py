"""The calendar day rpay bills on (docs/TABLE.md, "A day is a calendar day in the billing time zone")."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo


def billing_today(timezone_name: str, now: datetime | None = None) -> date:
    """Today's calendar date in the billing time zone (docs/TABLE.md, "A day is a calendar day
    in the billing time zone")."""
    now = now or datetime.now(tz=ZoneInfo("UTC"))
    return now.astimezone(ZoneInfo(timezone_name)).date()
