"""What the shop's access modules share: safe look-ups (and the clock, re-exported)."""

from __future__ import annotations

from typing import TypeVar

from pynamodb.exceptions import DoesNotExist

from shop.clock import date_bounds, iso, utc_now
from shop.ids import is_valid_id
from shop.models import ShopItem

__all__ = ["all_valid", "date_bounds", "get_by_ids", "iso", "utc_now"]

Item = TypeVar("Item", bound=ShopItem)


def all_valid(*ids: object) -> bool:
    """A look-up with an id that could not be in a key finds nothing (a 404, not a 500)."""
    return all(is_valid_id(i) for i in ids)


def get_by_ids(model: type[Item], **ids: str) -> Item | None:
    """One GetItem of the ``model`` item whose PK and SK the ``ids`` format; None when
    there is none, or when an id could not be in a key (``all_valid``)."""
    if not all_valid(*ids.values()):
        return None
    try:
        return model.get(model.pk(**ids), model.sk(**ids))
    except DoesNotExist:
        return None
