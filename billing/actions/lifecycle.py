"""Cancel (at period end or now), keep, pause and resume, as one operation each: the
access function makes the change and records its audit event, this module refunds what
must be refunded and tells the customer (``core.mail``). The portal's and the
staff's pages call these; the rules are ``billing.rules.lifecycle``'s.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.conf import settings
from django.utils.functional import lazy
from django.utils.translation import gettext_noop

from billing import access
from billing.access.usage_billing import usage_end_entry
from billing.actions.coupons import give_back_unused
from billing.models import AuditAction, Receipt, Subscription
from billing.notify import manage_url, tell
from billing.operations.final_usage import bill_final_usage, retry_usage_later
from billing.operations.payments import owed_amount
from billing.operations.refunds import refund_receipt
from billing.rules.cadence_words import next_payment_words
from billing.rules.lifecycle import CancelMode, unused_share, usage_billed_on
from billing.rules.schedule import cadence_of, charges_paying_from
from billing.rules.switch import receipts_from, usage_only
from core.mail import date_text, lazy_message, money_text
from core.payments.errors import GatewayError, PaymentError

log = logging.getLogger(__name__)


def _name(sub: Subscription) -> str:
    return sub.ProductName or sub.SKU


def next_amount_text(sub: Subscription) -> Any:
    """The next payment's amount for an e-mail, in the customer's language when rendered:
    the fixed fee, plus the usage of the period for a metered price (not known yet)."""
    return lazy(next_payment_words, str)(money_text(owed_amount(sub), sub.Currency),
                                         metered=bool(sub.MeteredPriceId), usage_alone=usage_only(sub))


def cancel_at_period_end(sub: Subscription, *, today: date, actor: str, reason: str, comment: str = "",
                         action: AuditAction = AuditAction.SUBSCRIPTION_CANCELLED) -> Subscription:
    """No further charge but the usage of its last period (a metered price's, billed the
    day after its last day); served to ``PaidThroughDate``; "Keep" undoes it until then."""
    access.end_subscription(sub, mode=CancelMode.PERIOD_END, today=today, actor=actor, reason=reason,
                            comment=comment, action=action)
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    tell("cancel_scheduled", sub, lazy_message(
        gettext_noop("Your %(product)s subscription ends on %(date)s"), product=_name(sub),
        date=date_text(paid_through) if paid_through else "-"),
        paid_through=paid_through, can_keep=bool(paid_through and paid_through >= today),
        manage_url=manage_url(sub), usage_on=usage_billed_on(sub))
    return sub


@dataclass
class CancelledNow:
    sub: Subscription
    refunded: int = 0  # minor units, in the subscription's currency
    refund_failures: list[str] = field(default_factory=list)  # one line each; staff can refund by hand
    # The open period's usage, billed by the cancel: charged (minor units, tax included), or
    # left to the payment run (the bank declined it, or the processor was out of reach).
    usage_charged: int = 0
    usage_pending: bool = False
    # The refunds' audit action: a customer's own cancel refunds them, staff's is a staff refund.
    refund_action: AuditAction = AuditAction.STAFF_REFUND


def cancel_now(sub: Subscription, *, today: date, actor: str, reason: str, comment: str = "",
               action: AuditAction = AuditAction.SUBSCRIPTION_CANCELLED) -> CancelledNow:
    """Served through today only; the days paid after today are refunded, each charge
    that paid them by its unused days' share (``lifecycle.unused_share``), under the
    refund key ``refund:<ChargeId>:cancel-<SubId>`` (a repeat refunds once)."""
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    access.end_subscription(sub, mode=CancelMode.NOW, today=today, actor=actor, reason=reason, comment=comment,
                            action=action)
    give_back_unused(sub, today=today)  # a trial that paid nothing: its coupon discounted nothing
    done = CancelledNow(sub, refund_action=AuditAction.STAFF_REFUND if action == AuditAction.STAFF_CANCEL
                        else AuditAction.CANCEL_REFUND)
    if paid_through and paid_through > today:
        # Read after the cancel: a payment recorded just before it is refunded too.
        for receipt, amount in refunds_if_cancelled_now(sub, today, paid_through=paid_through):
            _refund_unused(receipt, amount, today, actor, done)
    # The open period's usage, through today (its receipt pays no day after today: no
    # refund above takes it back). After the cancel, so no payment bills it too.
    _bill_usage_now(sub, today, actor, done)
    tell("cancelled_now", sub, lazy_message(gettext_noop("Your %(product)s subscription is cancelled"), product=_name(sub)),
          ended_on=today, refunded=money_text(done.refunded, sub.Currency) if done.refunded else "",
          refund_pending=bool(done.refund_failures),
          usage=money_text(done.usage_charged, sub.Currency) if done.usage_charged else "",
          usage_pending=done.usage_pending)
    return done


def _bill_usage_now(sub: Subscription, today: date, actor: str, done: CancelledNow) -> None:
    """A cancel now's usage, at once (what it charged, or that it is left to the run, is
    put on ``done`` for the page and the e-mail); should the bank decline it, the entry the
    cancel put has the payment run retry it (``PAYMENT_RETRY_DAYS``); should the processor
    be out of reach, the next run charges it under the same key. Either way the cancel
    stands."""
    if not sub.MeteredPriceId:
        return
    entry = usage_end_entry(sub, today, CancelMode.NOW)
    try:
        billed = bill_final_usage(sub, last_day=today, actor=actor)
    except GatewayError as error:
        log.warning("usage of %s's last period left to the payment run: %s", sub.sub_id, error)
        done.usage_pending = True
        return
    if billed.declined:
        retry_usage_later(entry, sub, today, billed.declined)
        done.usage_pending = True
    else:
        access.delete_entry(entry)
        done.usage_charged = int(billed.receipt.ProcessedAmount) if billed.receipt is not None else 0


def refunds_if_cancelled_now(sub: Subscription, today: date, *,
                             paid_through: date | None = None) -> list[tuple[Receipt, int]]:
    """What ``cancel_now`` refunds today, receipt by receipt: each charge that paid days
    after today, by its unused days' share (``lifecycle.unused_share``), at most what is
    left of it. The cancel page shows their sum before the customer confirms (one Query):
    a free trial, or a payment a coupon took whole, has nothing to refund. ``paid_through``:
    as it was before the cancel (default: the subscription's)."""
    if paid_through is None and sub.PaidThroughDate:
        paid_through = date.fromisoformat(sub.PaidThroughDate)
    if not paid_through or paid_through <= today:
        return []
    refunds = []
    for receipt in _receipts_paying_after(sub, today):
        start = date.fromisoformat(receipt.PeriodStart or receipt.BillingDate)
        share = unused_share(int(receipt.ProcessedAmount), start, date.fromisoformat(receipt.PeriodEnd), today)
        amount = min(share, int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0))
        if amount > 0:
            refunds.append((receipt, amount))
    return refunds


def refund_if_cancelled_now(sub: Subscription, today: date) -> int:
    """The sum ``cancel_now`` would refund today, in minor units (the cancel page's)."""
    return sum(amount for _, amount in refunds_if_cancelled_now(sub, today))


def _receipts_paying_after(sub: Subscription, today: date) -> list[Receipt]:
    # One Query: a charge pays for at most two of its periods ahead, inside this window.
    # (From the last payment's day when earlier: a period paid at a longer cadence before
    # a switch to a shorter one from its end, rules.switch.receipts_from.)
    back = receipts_from(sub, today, charges_paying_from(cadence_of(sub), today))
    receipts = access.get_receipts_by_account(sub.account_id, back, today)
    return [r for r in receipts if r.sub_id == sub.sub_id and r.PeriodEnd and r.PeriodEnd > today.isoformat()]


def _refund_unused(receipt: Receipt, amount: int, today: date, actor: str, done: CancelledNow) -> None:
    try:
        refund = refund_receipt(receipt, amount, request_id=f"cancel-{receipt.sub_id}", actor=actor,
                                reason=f"cancelled now: days after {today} unused", action=done.refund_action)
    except PaymentError as error:  # recorded as an audit event by refund_receipt
        done.refund_failures.append(f"{receipt.BillingDate}: {error}")
        return
    done.refunded += refund.amount


def keep(sub: Subscription, *, today: date, actor: str) -> Subscription:
    """Undo a cancel at period end: due again the day after the last paid day."""
    access.keep_subscription(sub, today=today, reminder_days_before=settings.REMINDER_DAYS_BEFORE, actor=actor)
    tell("subscription_kept", sub, lazy_message(gettext_noop("Your %(product)s subscription continues"), product=_name(sub)),
          next_payment=date.fromisoformat(sub.NextPaymentDate), next_amount=next_amount_text(sub),
          manage_url=manage_url(sub))
    return sub


def pause(sub: Subscription, *, resume: date | None, today: date, actor: str,
          action: AuditAction = AuditAction.SUBSCRIPTION_PAUSED) -> Subscription:
    """Pause collection until ``resume`` (the first payment after it) or, if None, until
    resumed. Raises ``lifecycle.PauseRefused`` or ``access.ConditionFailed``."""
    access.pause_subscription(sub, resume=resume, today=today, reminder_days_before=settings.REMINDER_DAYS_BEFORE,
                              actor=actor, action=action)
    tell("subscription_paused", sub, lazy_message(gettext_noop("Your %(product)s subscription is paused"), product=_name(sub)),
          paused_from=date.fromisoformat(sub.PausedFrom), resume=resume,
          next_amount=next_amount_text(sub) if resume else "",
          manage_url=manage_url(sub))
    return sub


def resume(sub: Subscription, *, today: date, actor: str,
           action: AuditAction = AuditAction.SUBSCRIPTION_RESUMED) -> Subscription:
    access.resume_subscription(sub, today=today, reminder_days_before=settings.REMINDER_DAYS_BEFORE, actor=actor,
                               action=action)
    tell("subscription_resumed", sub, lazy_message(gettext_noop("Your %(product)s subscription is resumed"), product=_name(sub)),
          next_payment=date.fromisoformat(sub.NextPaymentDate),
          next_amount=next_amount_text(sub), manage_url=manage_url(sub))
    return sub
