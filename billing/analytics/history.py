"""A subscription's history as the figures read it: the states it went through, each with
the first day it was in force, rebuilt from what the table already records (the
subscription item and its audit events' before/after snapshots). Pure: no I/O.

Each audit event that changes a subscription carries a snapshot of it (status, amount,
currency, paid-through day, pause, coupon, trial end: ``access.subscription_snapshot``),
so the state on any day is the snapshot of the last such event on or before that day.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from billing.models import AuditAction, SubscriptionStatus
from billing.rules.coupons import discount
from billing.rules.pricing import monthly_amount


@dataclass(frozen=True)
class CouponTerms:
    """What a coupon takes off (a copy of the ``Coupon`` item's discount)."""

    percent_off: int | None = None
    amount_off: int | None = None


@dataclass(frozen=True)
class SubState:
    """A subscription as it stood from ``start`` until the next state's start."""

    start: date
    status: str
    amount: int  # minor units, the recurring price per month before any discount
    currency: str
    paid_through: date | None = None
    trial_end: date | None = None
    paused_from: date | None = None
    paused_until: date | None = None
    # What a coupon for ever takes off each month (a once or repeating coupon: 0).
    recurring_discount: int = 0
    sku: str = ""  # the product (SKU) it was of, for the report's filters
    interval: str = "month"  # its price's interval: day, week, month or year
    # Outside the report's filter (billing/analytics/filters.py): counted as not in force.
    outside: bool = False


@dataclass(frozen=True)
class SubHistory:
    customer: str  # the account id: a customer is an account
    key: str  # the subscription's SK
    states: tuple[SubState, ...]  # in order of ``start``, at most one a day


@dataclass(frozen=True)
class Change:
    """One audit event about the subscription, with the billing day it happened on."""

    day: date
    action: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def _day(value: Any) -> date | None:
    return date.fromisoformat(str(value)[:10]) if value else None


def is_snapshot(values: Mapping[str, Any] | None) -> bool:
    """A full snapshot of the subscription (``access.subscription_snapshot``), not the
    receipt-shaped ``After`` of a payment event."""
    return bool(values) and "Status" in values and "PaymentAmount" in values and "Currency" in values


def state_from(snapshot: Mapping[str, Any], start: date, coupons: Mapping[str, CouponTerms],
               sku: str = "") -> SubState:
    """The state a snapshot describes. A coupon counts only when it is for ever (its
    ``CouponPaymentsLeft`` is null): a once or repeating coupon is a temporary price cut,
    not recurring revenue lost. ``sku``: the product when the snapshot does not name it
    (written before snapshots did: the SKU in the subscription's key)."""
    amount = int(snapshot.get("PaymentAmount") or 0)
    code = snapshot.get("Coupon")
    cut = 0
    if code and snapshot.get("CouponPaymentsLeft") is None and code in coupons:
        terms = coupons[code]
        cut = discount(amount, percent_off=terms.percent_off, amount_off=terms.amount_off)
    # A month's share of the amount per period (a yearly price / 12): the gross and the net
    # are each normalised, so the discount is their difference to the minor unit.
    interval, count = snapshot.get("Interval"), snapshot.get("IntervalCount")
    monthly, monthly_net = (monthly_amount(amount, interval, count),
                            monthly_amount(amount - cut, interval, count))
    amount, cut = monthly, monthly - monthly_net
    return SubState(
        start=start,
        status=str(snapshot.get("Status") or SubscriptionStatus.ACTIVE),
        amount=amount,
        currency=str(snapshot.get("Currency") or "").upper(),
        paid_through=_day(snapshot.get("PaidThroughDate")),
        trial_end=_day(snapshot.get("TrialEnd")),
        paused_from=_day(snapshot.get("PausedFrom")),
        paused_until=_day(snapshot.get("PausedUntil")),
        recurring_discount=cut,
        sku=str(snapshot.get("SKU") or sku),
        interval=str(interval or "month"),
    )


def build_history(customer: str, key: str, *, created: date, changes: Iterable[Change],
                  current: Mapping[str, Any], coupons: Mapping[str, CouponTerms]) -> SubHistory:
    """The states of one subscription: from its creation day, the ``subscription.created``
    event's snapshot (else the first event's ``Before``, else the item as it is now: data
    written before events kept snapshots); then each event's ``After``, on the day it was
    made (never before the creation day). ``changes`` in the order they were made: the last
    event of a day wins. A payment that
    succeeds on an ``incomplete`` subscription starts it (that event holds no snapshot)."""
    ordered = sorted(changes, key=lambda c: c.day)
    first = next((c.after for c in ordered if c.action == AuditAction.SUBSCRIPTION_CREATED and is_snapshot(c.after)),
                 None)
    if first is None:
        first = next((c.before for c in ordered if is_snapshot(c.before)), None) or current
    key_sku = key.split("#SKU#", 1)[1] if "#SKU#" in key else ""
    states: dict[date, SubState] = {created: state_from(first, created, coupons, key_sku)}
    last = states[created]
    for change in ordered:
        day = max(change.day, created)
        if change.action == AuditAction.SUBSCRIPTION_CREATED:
            continue
        if is_snapshot(change.after):
            last = state_from(change.after, day, coupons, last.sku)  # type: ignore[arg-type]
        elif change.action == AuditAction.PAYMENT_SUCCEEDED and last.status == SubscriptionStatus.INCOMPLETE:
            last = replace(last, start=day, status=SubscriptionStatus.ACTIVE)
        else:
            continue
        states[day] = last
    return SubHistory(customer, key, tuple(states[d] for d in sorted(states)))
