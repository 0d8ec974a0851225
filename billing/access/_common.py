"""What the access modules share (package-private): the exceptions callers catch, id and
clock helpers, the live-subscription condition, and the translation of DynamoDB's
conditional-check failures into those exceptions.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache, wraps
from typing import Any, TypeVar

from pynamodb.attributes import MapAttribute
from pynamodb.constants import NULL
from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Value
from pynamodb.expressions.update import Action, RemoveAction, SetAction
from pynamodb.models import Model

from billing.models import LIVE_STATUSES, Receipt, Subscription
from core.dynamo import engine
from core.dynamo.keys import InvalidKey


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


def update_if(item: Model, actions: list[Action], condition: Condition) -> bool:
    """One conditional UpdateItem of ``item``: False when its condition refused it (another
    writer got there first, or there is nothing left to change), which is no error;
    anything else (outage, throttling after retries) propagates unchanged."""
    try:
        item.update(actions=actions, condition=condition)
    except UpdateError as error:
        if is_conditional_failure(error):
            return False
        raise
    return True


def delete_entry(entry: Model) -> None:
    """Delete a marker item (an ``IncompleteEntry``, a ``UsageEndEntry``) its finder has
    settled; one deleted meanwhile by another process is no error."""
    try:
        entry.delete()
    except DeleteError as error:
        if not is_conditional_failure(error):
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


@cache
def _by_stored_name(model: type[Model]) -> dict[str, tuple[str, Any]]:
    """A model's attributes by their name in the table: (Python name, attribute)."""
    return {attribute.attr_name: (name, attribute) for name, attribute in model.get_attributes().items()}


def written_by(item: Model, actions: list[Action]) -> dict[str, Any]:
    """What ``actions`` write to ``item`` that is known before the write: {attribute: new
    value}, the default for a removed one; a SET to a plain value is known, an ADD or a computed
    SET is not (:func:`apply_updated` takes those from the response). Checked before the
    write: top-level attributes, and the declared attributes of a top-level map (e.g.
    ``PaymentDetails.AwaitingCharge``), whose new value is the map with that key changed."""
    attributes = _by_stored_name(type(item))
    written: dict[str, Any] = {}
    for action in actions:
        path = action.values[0].path
        if not 1 <= len(path) <= 2 or path[0] not in attributes:
            raise ValueError(f"not an attribute of {type(item).__name__}: {'.'.join(path)}")
        name, attribute = attributes[path[0]]
        if len(path) == 2:
            name, inner, attribute = _map_key(item, written, name, attribute, path)
        value = action.values[1].value if isinstance(action, SetAction) and isinstance(action.values[1], Value) else None
        if isinstance(action, RemoveAction) or (value is not None and NULL in value):
            # Absent (or NULL, from ``set(None)``) reads back as the attribute's default.
            new = attribute.default() if callable(attribute.default) else attribute.default
        elif value is not None:
            new = attribute.deserialize(attribute.get_value(value))
        else:
            continue
        if len(path) == 2:
            setattr(written[name], inner, new)
        else:
            written[name] = new
    return written


def _map_key(item: Model, written: dict[str, Any], name: str, attribute: Any, path: list[str]) -> tuple[str, str, Any]:
    """For a path into a map attribute: the map's name, the key's Python name and its
    attribute; ``written[name]`` becomes a copy of the map (as written so far) to change."""
    keys = {a.attr_name: (n, a) for n, a in attribute.get_attributes().items()} \
        if isinstance(attribute, MapAttribute) and type(attribute) is not MapAttribute else {}
    if path[1] not in keys:
        raise ValueError(f"not an attribute of {type(item).__name__}: {'.'.join(path)}")
    if name not in written:
        current = getattr(item, name)
        written[name] = type(attribute)(**(current.attribute_values if current is not None else {}))
    inner, inner_attribute = keys[path[1]]
    return name, inner, inner_attribute


def apply_updated(item: Model, written: dict[str, Any], updated: dict[str, dict[str, Any]]) -> None:
    """Bring ``item`` to what an UpdateItem wrote: the values it was given
    (:func:`written_by`), and the others from its ``UPDATED_NEW`` response (a version's
    ADD). The response is not used for what we wrote ourselves: for a map set whole,
    moto returns only its changed keys (DynamoDB the whole map)."""
    for name, value in written.items():
        setattr(item, name, value)
    attributes = _by_stored_name(type(item))
    for attr_name, value in updated.items():
        name, attribute = attributes[attr_name]
        if name not in written:
            setattr(item, name, attribute.deserialize(attribute.get_value(value)))


def transact_with_retries(write: Callable[[Any], None], attempts: int = 8) -> None:
    """Run ``write(tx)`` in one TransactWriteItems, again (with a jittered pause) when it
    met another transaction on one of its items (``TransactionConflict``: many customers
    taking one coupon at once); a condition's refusal or any other error is raised."""
    for attempt in range(attempts):
        try:
            with engine.transact_write() as tx:
                write(tx)
            return
        except TransactWriteError as error:
            reasons = error.cancellation_reasons or []
            conflict = any(r is not None and r.code == "TransactionConflict" for r in reasons) \
                or getattr(error, "cause_response_code", None) == "TransactionConflictException"
            if not conflict or is_conditional_failure(error) or attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0.01, 0.05) * 2**min(attempt, 4))
