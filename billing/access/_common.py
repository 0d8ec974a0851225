"""What the access modules share (package-private): the exceptions callers catch, id and
clock helpers, the live-subscription condition, and the translation of DynamoDB's
conditional-check failures into those exceptions.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import wraps
from typing import Any, TypeVar

from pynamodb.exceptions import PutError, TransactWriteError, UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action, RemoveAction
from pynamodb.models import Model

from billing.models import LIVE_STATUSES, InvalidKey, Receipt, Subscription


class AlreadyExists(Exception):
    """A conditional put found the item already there."""


class ConditionFailed(Exception):
    """A conditional update found the item changed (or gone) since it was read."""


class PaymentInProgress(ConditionFailed):
    """The subscription's payment is due today or still pending: its schedule can't move
    until that payment has been taken (or the batch could charge the period twice)."""


def new_id() -> str:
    """A random, URL-safe identifier: never derived from an e-mail or a counter."""
    return secrets.token_hex(8)


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def iso_now() -> str:
    return utc_now().isoformat(timespec="seconds")


def is_conditional_failure(error: Exception) -> bool:
    """A write refused by its condition (as opposed to an outage or a bad request); for a
    transaction, refused by the condition of one of its items."""
    code = getattr(error, "cause_response_code", None)
    if code == "TransactionCanceledException":
        reasons = getattr(error, "cancellation_reasons", None) or []
        return any(r is not None and r.code == "ConditionalCheckFailed" for r in reasons)
    return code == "ConditionalCheckFailedException"


@contextmanager
def refused_as(domain_error: type[Exception], key: str) -> Iterator[None]:
    """Turn a conditional write's refusal into ``domain_error(key)``; anything else
    (outage, throttling after retries) propagates unchanged."""
    try:
        yield
    except (PutError, UpdateError, TransactWriteError) as error:
        if is_conditional_failure(error):
            raise domain_error(key) from error
        raise


def live() -> Condition:
    """The condition that a subscription is still live (active or past due)."""
    return Subscription.Status.is_in(*LIVE_STATUSES)


def is_expired(receipt: Receipt, now: datetime) -> bool:
    # DynamoDB deletes expired items lazily (up to days later): hide them ourselves.
    return receipt.TTL is not None and now >= receipt.TTL


Result = TypeVar("Result")


def absent_if_invalid(empty: Callable[[], Any] = lambda: None) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """A look-up given an id that cannot be in a key (``InvalidKey``: too long, a '#')
    finds nothing, as DynamoDB would if asked: ``empty()`` (None, [], ...), never an error.
    With the check in the key templates, this makes invariant 9 hold for every read."""

    def decorate(read: Callable[..., Result]) -> Callable[..., Result]:
        @wraps(read)
        def wrapper(*args: Any, **kwargs: Any) -> Result:
            try:
                return read(*args, **kwargs)
            except InvalidKey:
                return empty()

        return wrapper

    return decorate


def removed_by(item: Model, actions: list[Action]) -> list[str]:
    """The attributes of ``item`` that ``actions`` remove, checked before the write: top-level
    paths only, as :func:`apply_updated` needs (a nested one would come back as a partial
    map)."""
    names = {attribute.attr_name: name for name, attribute in item.get_attributes().items()}
    removed = []
    for action in actions:
        path = action.values[0].path
        if len(path) != 1 or path[0] not in names:
            raise ValueError(f"not a top-level attribute of {type(item).__name__}: {'.'.join(path)}")
        if isinstance(action, RemoveAction):
            removed.append(names[path[0]])
    return removed


def apply_updated(item: Model, removed: list[str], updated: dict[str, dict[str, Any]]) -> None:
    """Bring ``item`` to what an UpdateItem wrote, from its ``UPDATED_NEW`` response: the
    updated attributes as DynamoDB returned them, None for the ``removed`` ones
    (:func:`removed_by`); the others stay as read."""
    for name in removed:
        setattr(item, name, None)
    attributes = {attribute.attr_name: (name, attribute) for name, attribute in item.get_attributes().items()}
    for attr_name, value in updated.items():
        name, attribute = attributes[attr_name]
        setattr(item, name, attribute.deserialize(attribute.get_value(value)))
