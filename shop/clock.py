"""The shop's clock and date rules: UTC ISO-8601 with 'Z'; a date range includes the
whole of its last day (docs/SHOP.md, "Where the original design is wrong", 7)."""

from __future__ import annotations

from datetime import UTC, date, datetime


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def today() -> str:
    """Today's UTC date as YYYY-MM-DD (a discount code's validity is in these)."""
    return utc_now().date().isoformat()


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with 'Z', to the second: sorts as text, as keys need."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def date_bounds(first: date, last: date, prefix: str = "") -> tuple[str, str]:
    """Sort-key bounds of a date range that includes the whole of its last day
    ('~' sorts after every character of a timestamp)."""
    return f"{prefix}{first.isoformat()}", f"{prefix}{last.isoformat()}~"
