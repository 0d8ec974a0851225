"""What the shop's access modules share: the clock, date-range bounds, safe look-ups."""

from __future__ import annotations

from datetime import UTC, date, datetime

from shop.ids import is_valid_id


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with 'Z', to the second: sorts as text, as keys need."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def date_bounds(first: date, last: date, prefix: str = "") -> tuple[str, str]:
    """Sort-key bounds of a date range that includes the whole of its last day."""
    return f"{prefix}{first.isoformat()}", f"{prefix}{last.isoformat()}~"


def all_valid(*ids: object) -> bool:
    """A look-up with an id that could not be in a key finds nothing (a 404, not a 500)."""
    return all(is_valid_id(i) for i in ids)
