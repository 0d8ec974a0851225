"""What every access module shares: the exceptions callers catch, id and clock helpers,
and the small conditions several modules build their writes on.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from pynamodb.expressions.condition import Condition

from billing.models import Receipt, Subscription, SubscriptionStatus


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


def _is_conditional_failure(error: Exception) -> bool:
    return getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException"


def _live() -> Condition:
    return Subscription.Status.is_in(*SubscriptionStatus.LIVE)


def _expired(receipt: Receipt, now: datetime) -> bool:
    # DynamoDB deletes expired items lazily (up to days later): hide them ourselves.
    return receipt.TTL is not None and now >= receipt.TTL
