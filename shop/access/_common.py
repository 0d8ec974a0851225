"""What the shop's access modules share: safe look-ups (and the clock, re-exported)."""

from __future__ import annotations

from shop.clock import date_bounds, iso, utc_now
from shop.ids import is_valid_id

__all__ = ["all_valid", "date_bounds", "iso", "utc_now"]


def all_valid(*ids: object) -> bool:
    """A look-up with an id that could not be in a key finds nothing (a 404, not a 500)."""
    return all(is_valid_id(i) for i in ids)
