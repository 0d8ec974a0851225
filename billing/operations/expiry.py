"""Expiring incomplete subscriptions (Stripe Billing's ``incomplete`` ->
``incomplete_expired`` after 23 hours): a first payment the bank wanted the customer to
confirm, left unconfirmed.

Expiring one: the subscription is ``incomplete_expired`` (it never started), its
PaymentIntent is cancelled at the processor (so an old bank page cannot pay it later),
its coupon's use and its free trial are given back. Should the processor have taken the
money anyway (confirmed in the browser at the last moment), the reconciliation finds the
charge of a subscription that never started and refunds it in full (M2), never kept.

Who expires them: the payment run (``expire_due``), which finds them without a Scan by
one Query of ``IncompleteEntry`` (one partition, sorted by creation time: the ones past
their deadline are a key range); and the confirmation page, when a customer comes back too late
(``expire``). Pages show one past its deadline as expired at once, from its
``CreatedDate`` (``rules.lifecycle.state_of``): the write may come later.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from billing import access
from billing.models import INCOMPLETE_HOURS, Subscription, SubscriptionStatus
from billing.rules.lifecycle import is_expired_incomplete
from core.payments.errors import GatewayError
from core.payments.gateway import PaymentGateway, get_gateway

log = logging.getLogger(__name__)

def expire(sub: Subscription, *, actor: str, gateway: PaymentGateway | None = None) -> bool:
    """Expire ``sub`` if it is incomplete: the charge cancelled at the processor, the
    subscription ``incomplete_expired``, its coupon use and trial given back. False when
    it was not incomplete any more (confirmed, or expired by another process)."""
    if sub.Status != SubscriptionStatus.INCOMPLETE:
        return False
    charge_id = sub.PaymentDetails.AwaitingCharge if sub.PaymentDetails else None
    if charge_id:
        try:
            (gateway or get_gateway()).cancel_charge(charge_id)
        except GatewayError as error:
            # Expired all the same: a charge the processor takes later is refunded by the
            # reconciliation (the subscription never started).
            log.warning("could not cancel the first charge %s of %s: %s", charge_id, sub.sub_id, error)
    try:
        access.expire_incomplete(sub, actor=actor)
    except access.ConditionFailed:
        return False
    if sub.CouponCode:
        access.release_coupon_use(sub.CouponCode)
    access.release_trial(sub)
    return True


def expire_due(*, now: datetime | None = None, gateway: PaymentGateway | None = None,
               takes: Callable[[str], bool] | None = None, actor: str = "batch") -> int:
    """The payment run's step: every incomplete subscription past its deadline expired, and
    the entries of those confirmed (or ended) meanwhile deleted. ``takes(sub_id)``: only
    these (a run's shards). Returns how many it expired. Requests: one Query (the entries
    made before ``now`` less ``INCOMPLETE_HOURS``), one GetItem per entry found, and the
    writes of each expiry."""
    now = now or datetime.now(tz=UTC)
    expired = 0
    for entry in access.incomplete_entries(created_before=now - timedelta(hours=INCOMPLETE_HOURS, seconds=-1)):
        if takes is not None and not takes(entry.SubId):
            continue
        sub = access.get_subscription(entry.AccountId, entry.SubId, entry.SKU)
        if sub is not None and sub.Status == SubscriptionStatus.INCOMPLETE:
            if not is_expired_incomplete(sub, now):
                continue
            expired += expire(sub, actor=actor, gateway=gateway)
        access.delete_entry(entry)
    return expired
