"""Billing's errors, in one module (django-oscar's payment/exceptions.py is the model):
what a conditional write found, what a rule refused, what a command was given wrong.
The payment errors are the gateways' (core/payments/errors.py); an unreachable or
throttled DynamoDB is core/dynamo/errors.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from billing.models import Receipt, Subscription

# --- conditional writes (the access layer) ------------------------------------------


class AlreadyExists(Exception):
    """A conditional put found the item already there."""


class ConditionFailed(Exception):
    """A conditional update found the item changed (or gone) since it was read."""


class TrialAlreadyUsed(Exception):
    """The account has had the free trial of this product already (``TrialUse``):
    nothing was written."""


class PaymentInProgress(ConditionFailed):
    """The subscription's payment is due today or still pending: its schedule can't move
    until that payment has been taken (or the batch could charge the period twice)."""


class CardInUse(Exception):
    """A card that live subscriptions pay with cannot be removed: they would have none."""

    def __init__(self, subscriptions: list[Subscription]) -> None:
        super().__init__(", ".join(s.sub_id for s in subscriptions))
        self.subscriptions = subscriptions


class DueShardsMismatch(Exception):
    """``settings.DUE_SHARDS`` disagrees with the count recorded with the table (or the
    table has none): one line saying what to do."""


class ReceiptNumberTaken(ConditionFailed):
    """A new receipt's number already belongs to another receipt: the year's counter
    is behind its look-up items (a table restored from an old backup). Nothing was
    written; the number is not reused."""


class RefundedMeanwhile(ConditionFailed):
    """A refund was refused before the gateway was asked: the receipt's refunded amount is
    no longer what the refund form showed, or another refund of it is under way (another
    tab). ``receipt`` is the receipt as it is now."""

    def __init__(self, receipt: Receipt, *, in_progress: bool = False) -> None:
        super().__init__(receipt.SK)
        self.receipt = receipt
        self.in_progress = in_progress


class MigrationConflict(ConditionFailed):
    """Another migration, to another count, is recorded as running."""


# --- rules and commands ---------------------------------------------------------------


class ShardChoiceError(ValueError):
    """A shard option that does not fit the table's shard count (one line for the command)."""


class PauseRefused(ValueError):
    """A pause that cannot be made (past due, already paused, a payment being taken, an
    end date too soon or too far); the message says why, for the page."""


class CouponRefused(ConditionFailed):
    """A coupon that cannot be given to a subscription: ``reason`` is a
    ``rules.coupons.CouponRefusal`` (ended, not valid yet, expired, used up, another
    currency), or None for a code that does not exist. Nothing was written."""

    def __init__(self, code: str, reason: str | None) -> None:
        super().__init__(f"{code}: {reason or 'unknown'}")
        self.code, self.reason = code, reason
