"""Erasing an item's personal data when other writers may change it meanwhile: the
billing account's items and the shop's orders both need it (a customer's "close my account")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pynamodb.exceptions import DoesNotExist, UpdateError

ATTEMPTS = 5


def update_until_settled(item: Any, actions_of: Callable[[Any], list]) -> None:
    """Apply ``actions_of(item)`` to the item as it is; when a write beside ours changed it
    first (its version check, or any condition, refused ours), read it again and apply what
    is left to do then. ``item``: a model of one of the apps' tables (their hash key is ``PK``). Nothing to do, or the item gone, ends it; an item that keeps
    changing after ``ATTEMPTS`` tries is an error (something writes it in a loop)."""
    for _attempt in range(ATTEMPTS):
        actions = actions_of(item)
        if not actions:
            return
        try:
            item.update(actions=actions, condition=type(item).PK.exists())
            return
        except UpdateError as error:
            if getattr(error, "cause_response_code", None) != "ConditionalCheckFailedException":
                raise
        try:
            item.refresh(consistent_read=True)
        except DoesNotExist:
            return
    raise RuntimeError(f"{item.PK} {item.SK} kept changing while being erased")
