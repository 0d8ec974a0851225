"""Subscriptions: create, read, and the portal's and staff's conditional updates (change
day, replace card, cancel, set schedule), each with its own audit event, and the two
batch-index Queries.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import date, timedelta
from functools import partial
from typing import Any

from pynamodb.constants import ATTRIBUTES, UPDATED_NEW
from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.expressions.condition import Condition

from billing.access._common import (
    absent_if_invalid,
    apply_updated,
    is_conditional_failure,
    iso_now,
    live,
    new_id,
    refused_as,
    written_by,
)
from billing.access.coupons import (
    add_coupon_use,
    check_coupon,
    coupon_attributes,
    coupon_refused,
    transact_with_retries,
)
from billing.access.due_dates import due_attributes, leave_due_indexes, next_payment_on, next_reminder_on
from billing.access.due_shards import due_keys, due_shard_layout, parallel_items
from billing.access.events import new_event, subscription_snapshot
from billing.access.lookups import record_subscription_id
from billing.access.outbox import preview, save_item, subscription_event, transact_update
from billing.access.trials import trial_use
from billing.access.usage_billing import usage_end_entry
from billing.exceptions import AlreadyExists, ConditionFailed, CouponRefused, TrialAlreadyUsed
from billing.models import (
    MAX_TRIAL_DAYS,
    Account,
    AuditAction,
    Coupon,
    MerchantEvent,
    MerchantEventType,
    PaymentDetails,
    Subscription,
    SubscriptionStatus,
    TrialUse,
)
from billing.rules.add_ons import AddOn
from billing.rules.coupons import CouponRefusal
from billing.rules.lifecycle import CancelMode
from billing.rules.schedule import (
    Cadence,
    cadence_of,
    check_payment_day,
    first_period,
    new_cadence,
    renewal_reminder,
)
from billing.rules.tax import stored_tax_behavior
from core.dynamo import engine
from core.payments.gateway import CardToken


def payment_details_from(card: CardToken, billing_address: str | None = None,
                         card_id: str | None = None) -> PaymentDetails:
    """The subscription's copy of its card; ``card_id`` names the wallet card."""
    return PaymentDetails(
        Token=card.token, Brand=card.brand, Last4=card.last4,
        ExpMonth=card.exp_month, ExpYear=card.exp_year, BillingAddress=billing_address, CardId=card_id,
        Country=card.country,
    )


def create_subscription(
    account: Account,
    *,
    sku: str,
    payment_day: int,
    amount: int,
    currency: str,
    card: CardToken,
    today: date,
    reminder_days_before: int,
    product_name: str | None = None,
    billing_address: str | None = None,
    actor: str | None = None,
    card_id: str | None = None,
    coupon: Coupon | None = None,
    trial_days: int = 0,
    interval: str | None = None,
    interval_count: int | None = None,
    price_id: str | None = None,
    quantity: int | None = None,
    unit_amount: int | None = None,
    metered_price_id: str | None = None,
    tax_behavior: str | None = None,
    add_ons: Sequence[AddOn] = (),
) -> Subscription:
    """PutItem, only if absent, and its ``subscription.created`` events (the audit's and
    the merchant's, billing/access/outbox.py), in one transaction.

    ``coupon``: given to it from its first payment, its use counted in the same
    transaction (on the coupon's condition: ``CouponRefused`` and nothing written when it
    cannot be used today).

    Paid in advance (docs/MONEY.md M1): the new subscription owes its first period from
    ``today`` (``NextPaymentDate`` is today, ``PaidThroughDate`` yesterday), which the
    caller charges at once through the batch's own path (``operations.payments.take_first_payment``).
    It carries all four GSI keys (the ``Last*`` ones at the creation date), so should that
    charge not happen, today's or the next catch-up run finds it.

    With ``trial_days`` (docs/MONEY.md "Free trials"): free from ``today`` to
    ``TrialEnd`` (today + trial_days - 1), served and paid through then; the first period
    is owed from the day after, and both ``Last*`` dates are set to that day: the payment
    run knows its first period by ``LastPaymentDate`` (``owed_period``), the reminder run
    the end of the trial by ``LastReminderDate`` (both range keys, so in both indexes). The
    account's ``TrialUse`` marker is put in the same transaction, only if absent:
    ``TrialAlreadyUsed`` (nothing written) when it had this product's trial already.

    ``interval``, ``interval_count`` (docs/MONEY.md "Cadences"): renews every
    ``interval_count`` days, weeks, months or years (default: every month); ``amount`` is
    the price of one such period. Anchored from the first charge's day
    (``schedule.new_cadence``); ``ValueError`` for an interval out of range.

    ``price_id``: the catalog price subscribed to (``rules.price_choice``); ``quantity``
    and ``unit_amount``: a seat price's seats and the price of one (``amount`` is their
    product).

    ``metered_price_id`` with ``amount`` 0: a subscription to that metered price alone
    (``rules.price_choice.choose_usage_only``), named from its creation, since it has no
    fixed fee whose first charge must come first.

    ``tax_behavior``: the price's (``Price.TaxBehavior``; None: as the seller's profile says).

    ``add_ons`` (billing/rules/add_ons.py): billed from the first charge on, beside the
    plan; ``amount`` is the whole fee, theirs included.
    """
    usage_only = amount == 0 and metered_price_id is not None
    if not isinstance(amount, int) or amount < 0 or (amount == 0 and not usage_only):
        raise ValueError("amount must be a positive integer number of minor units (0: a metered price alone)")
    if usage_only and coupon is not None:  # no fixed fee to discount; nothing written
        raise CouponRefused(coupon.Code, CouponRefusal.NO_FIXED_FEE)
    if not isinstance(trial_days, int) or not 0 <= trial_days <= MAX_TRIAL_DAYS:
        raise ValueError(f"trial days must be 0-{MAX_TRIAL_DAYS}, not {trial_days!r}")
    check_payment_day(payment_day)
    sub_id = new_id()
    trial_end = today + timedelta(days=trial_days - 1) if trial_days else None
    # The first charge's day: today, or the day after the trial.
    first_day = trial_end + timedelta(days=1) if trial_end else today
    cadence = new_cadence(payment_day, first_day, interval, interval_count)
    # The first reminder announces the payment after the first charge made at subscribing;
    # after a trial, the first charge itself.
    reminded = first_day if trial_end else first_period(cadence, today)[1] + timedelta(days=1)
    sub = Subscription(
        account.PK,
        Subscription.sk(sub_id=sub_id, sku=sku),
        Email=account.Email,
        SKU=sku,
        ProductName=product_name,
        PaymentDay=payment_day,
        **cadence_attributes(cadence),
        PaymentAmount=amount,
        Currency=currency.upper(),
        **due_attributes(sub_id, first_day, renewal_reminder(cadence, reminded, reminder_days_before, today,
                                                             ends_trial=bool(trial_end))),
        LastPaymentDate=first_day.isoformat(),
        LastReminderDate=first_day.isoformat(),
        PaidThroughDate=(first_day - timedelta(days=1)).isoformat(),
        TrialEnd=trial_end.isoformat() if trial_end else None,
        PaymentDetails=payment_details_from(card, billing_address, card_id),
        Language=account.Language,
        # The account's tax identity, copied so its charges need no other read.
        BillingCountry=account.BillingCountry, VatNumber=account.VatNumber,
        TaxBehavior=stored_tax_behavior(tax_behavior),
        CreatedDate=iso_now(),
        Status=SubscriptionStatus.ACTIVE,
        PriceId=price_id, Quantity=quantity, UnitAmount=unit_amount,
        MeteredPriceId=metered_price_id if usage_only else None,
        AddOns=[replace(add_on, first_day=first_day).stored() for add_on in add_ons] or None,
        **(coupon_attributes(check_coupon(coupon, coupon.Code, currency=currency, day=today)) if coupon else {}),
    )
    event = new_event(account.account_id, actor=actor or account.Email, action=AuditAction.SUBSCRIPTION_CREATED,
                      subject=sub.SK, before=None, after=subscription_snapshot(sub))

    created = subscription_event(MerchantEventType.SUBSCRIPTION_CREATED, preview(sub, []))

    def write(tx: Any) -> None:
        tx.save(sub, condition=Subscription.SK.does_not_exist())
        tx.save(event)
        if trial_end:
            tx.save(trial_use(account.account_id, sku, sub_id=sub_id, trial_end=trial_end),
                    condition=TrialUse.SK.does_not_exist())
        if coupon is not None:
            add_coupon_use(tx, coupon, today)
        save_item(tx, created)  # last: the positions above are what the refusals are told by

    # One request: the item, its event, the trial's marker and the coupon's use, or none
    # of them (another subscribe's transaction on the marker or the coupon at the same
    # instant: tried again, and the conditions then say which one had them).
    try:
        transact_with_retries(write)
    except TransactWriteError as error:
        if trial_end and _refused_at(error, 2, "ConditionalCheckFailed"):
            raise TrialAlreadyUsed(sku) from error
        if coupon is not None and is_conditional_failure(error):
            coupon_refused(error, coupon, currency=currency, day=today)
        with refused_as(AlreadyExists, sub.SK):
            raise
    record_subscription_id(sub)  # staff find it by its id alone (access/lookups.py)
    return sub


def cadence_attributes(cadence: Cadence) -> dict[str, Any]:
    """The item's cadence attributes: none for the plain monthly one (as every item written
    before cadences), so monthly items stay as they were."""
    if cadence.is_monthly:
        return {}
    return {"Interval": str(cadence.interval), "IntervalCount": cadence.count,
            "IntervalAnchor": cadence.anchor.isoformat() if cadence.anchor else None}


def _refused_at(error: BaseException | None, position: int, code: str) -> bool:
    """Whether a cancelled transaction's item at ``position`` was refused with ``code``."""
    reasons = getattr(error, "cancellation_reasons", None) or []
    return len(reasons) > position and reasons[position] is not None and reasons[position].code == code


@absent_if_invalid()
def get_subscription(account_id: str, sub_id: str, sku: str | None = None) -> Subscription | None:
    """GetItem when the SKU is known; otherwise (or when that misses: a switched
    subscription's key holds the SKU it was made with) one Query on the ``SUB#<SubId>#``
    prefix (the SKU is part of the sort key, and URLs carry only the subscription id).
    """
    pk = Subscription.pk(account_id=account_id)
    if sku is not None:
        try:
            return Subscription.get(pk, Subscription.sk(sub_id=sub_id, sku=sku), consistent_read=True)
        except DoesNotExist:
            # A subscription switched to another product keeps the SKU it was made with in
            # its key (``key_sku``): asked by its current SKU, it is found by its id.
            pass
    prefix = Subscription.sk_template.format(sub_id=sub_id, sku="")
    for sub in Subscription.query(pk, Subscription.SK.startswith(prefix), consistent_read=True):
        return sub
    return None


@absent_if_invalid(list)
def get_subscriptions_by_account(account_id: str) -> list[Subscription]:
    """Query base table, ``begins_with(SK, "SUB#")``: never receipts or other accounts'."""
    return list(
        Subscription.query(
            Subscription.pk(account_id=account_id),
            Subscription.SK.startswith(Subscription.sk_template.prefix),
        )
    )


def update_subscription(
    sub: Subscription,
    actions: list,
    condition: Condition | None = None,
    *,
    check_version: bool = True,
) -> Subscription:
    """UpdateItem with a condition; raises ConditionFailed when it does not hold.

    ``check_version`` adds PynamoDB's optimistic-locking check on ``Version`` (the
    portal's read-modify-write); batches pass their own business condition instead.
    Top-level attributes only (``written_by`` refuses a nested path before writing).
    """
    # What ``Model.update`` does, but reading back only what changed (UPDATED_NEW):
    # ``Model.update`` always asks for ALL_NEW, and botocore and PynamoDB then parse and
    # deserialise the whole item (25 attributes and the card map) the caller already
    # holds, on every batch payment's advance (docs/PERFORMANCE.md). With the
    # version checked nobody else changed the item, so what is in memory is what is
    # stored; unchecked (the batches), only what this write set is known to be current.
    # The version always moves on, as with ``Model.update``.
    version = Subscription.Version
    actions = [*actions, version.add(1) if sub.Version is not None else version.set(1)]
    if check_version:
        condition &= (version == sub.Version) if sub.Version is not None else version.does_not_exist()
    written = written_by(sub, actions)
    with refused_as(ConditionFailed, sub.SK):
        data = engine.table_connection(Subscription).update_item(
            sub.PK, range_key=sub.SK, actions=actions, condition=condition, return_values=UPDATED_NEW)
    apply_updated(sub, written, data.get(ATTRIBUTES, {}))
    return sub


def _audited_update(sub: Subscription, actions: list, condition: Condition | None, *, actor: str,
                    action: AuditAction | str, check_version: bool = True, note: str | None = None,
                    event: MerchantEventType | None = None, also: Sequence[MerchantEvent] = ()) -> Subscription:
    """The update, its audit event (before/after snapshots) and its merchant ``event``
    (with ``also``: more merchant events the same change reports), in one
    TransactWriteItems, in one function so that no caller can forget an event. Nothing is
    recorded when the update is refused (ConditionFailed), and no event without it."""
    return transact_update(sub, actions, condition, check_version=check_version,
                           items=audited_items(sub, actions, actor=actor, action=action, note=note, event=event,
                                               also=also))


def audited_items(sub: Subscription, actions: list, *, actor: str, action: AuditAction | str,
                  note: str | None = None, event: MerchantEventType | None = None,
                  also: Sequence[MerchantEvent] = (), after_extra: dict | None = None) -> list:
    """The items that join a subscription's update: its audit event (the snapshot before,
    and after ``actions``, plus ``after_extra``), its merchant ``event`` and ``also``."""
    after = preview(sub, actions)
    items: list = [new_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                             before=subscription_snapshot(sub),
                             after={**subscription_snapshot(after), **(after_extra or {})}, note=note)]
    if event is not None:
        items.append(subscription_event(event, after))
    return [*items, *also]


def change_payment_day(
    sub: Subscription,
    new_day: int,
    *,
    actor: str = "system",
    action: AuditAction = AuditAction.PAYMENT_DAY_CHANGED,
) -> Subscription:
    """Move the anchor to a new day of the month, prorated by day (docs/MONEY.md M1).
    Months and years only (every N months and years keep their anchor month: a yearly
    one moves its anniversary within that month); weeks and days have no such day
    (``ValueError``).

    Only ``PaymentDay`` changes: the days already paid stay paid (``PaidThroughDate``),
    and the next payment stays on its date and charges from there to the first new
    anchor at least 28 days on (``schedule.period_end``), prorated by day
    (``schedule.period_amount``). So no day is granted unpaid or charged twice, however
    often the day changes; a past-due period stays owed (``BillingPeriod``,
    ``RetryCount`` and ``Status`` are untouched), and since no date moves, a change
    racing the payment run cannot make it charge twice: the run's advance writes the
    dates of the period it charged. ``today`` and ``reminder_days_before`` are accepted
    for the callers of the old rule and not needed.
    """
    check_payment_day(new_day)
    if not cadence_of(sub).has_payment_day:  # the pages refuse it first, in words (NO_PAYMENT_DAY)
        raise ValueError("weeks and days have no payment day to change")
    return _audited_update(sub, [Subscription.PaymentDay.set(new_day)], live(), actor=actor, action=action,
                           event=MerchantEventType.SUBSCRIPTION_UPDATED)


def set_schedule(
    sub: Subscription,
    *,
    next_payment: date,
    last_payment: date,
    next_reminder: date,
    last_reminder: date,
) -> Subscription:
    """Overwrite all four schedule dates (demo seeding and staff repairs); paid through
    the day before the next payment, as the payment batch leaves it."""
    return update_subscription(
        sub,
        [
            *next_payment_on(sub.sub_id, next_payment),
            Subscription.PaidThroughDate.set((next_payment - timedelta(days=1)).isoformat()),
            Subscription.LastPaymentDate.set(last_payment.isoformat()),
            *next_reminder_on(sub.sub_id, next_reminder),
            Subscription.LastReminderDate.set(last_reminder.isoformat()),
        ],
        live(),
    )


def replace_card(sub: Subscription, card: CardToken, billing_address: str | None = None, *,
                 actor: str = "system", action: AuditAction = AuditAction.CARD_REPLACED,
                 card_id: str | None = None) -> Subscription:
    """The card future payments use (``card_id``: the wallet card it is a copy of). A
    past-due period stays owed: the caller retries it with the new card at once."""
    details = payment_details_from(card, billing_address, card_id)
    return _audited_update(sub, [Subscription.PaymentDetails.set(details)], live(), actor=actor, action=action,
                           event=MerchantEventType.SUBSCRIPTION_UPDATED)


def cancel_subscription(
    sub: Subscription,
    *,
    actor: str = "system",
    reason: str = "customer",
    action: AuditAction = AuditAction.SUBSCRIPTION_CANCELLED,
    check_version: bool = True,
    also: Sequence[MerchantEvent] = (),
    bill_usage: bool = False,
) -> Subscription:
    """No further charges: the ``Next*`` keys go, so the item leaves both indexes at once.
    The service runs to ``PaidThroughDate`` (paid in advance, no refund of unused days);
    a past-due period ends unpaid and unserved. ``subscription.cancelled``, and ``also``
    (the ``payment.failed`` that ended it) in the same transaction. ``bill_usage`` (staff's
    cancel): a metered price's usage up to ``PaidThroughDate`` is still billed, the day
    after it, by the entry a cancel at period end puts (in the same transaction), since
    no payment is left to carry it; a cancel for an unpaid period bills none."""
    ending = [usage_end_entry(sub, date.fromisoformat(sub.PaidThroughDate), CancelMode.PERIOD_END)] \
        if bill_usage and sub.MeteredPriceId and sub.PaidThroughDate \
        and sub.Status != SubscriptionStatus.PAST_DUE else []
    return _audited_update(
        sub,
        [
            Subscription.Status.set(SubscriptionStatus.CANCELLED),
            Subscription.CancelledDate.set(iso_now()),
            Subscription.CancelReason.set(reason),
            *leave_due_indexes(),
        ],
        live(),
        actor=actor, action=action, check_version=check_version, note=reason,
        event=MerchantEventType.SUBSCRIPTION_CANCELLED, also=[*also, *ending],
    )


def get_due_reminders_by_date(day: date, *, shards: Sequence[int] | None = None,
                              page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-1 on ``DueReminderKey`` ``<day>#<shard>`` for every shard (or the given ones),
    in parallel: every subscription to remind that day, each once."""
    return _due_on(Subscription.due_reminders, day, shards, page_size)


def get_due_payments_by_date(day: date, *, shards: Sequence[int] | None = None,
                             page_size: int | None = None) -> Iterator[Subscription]:
    """Query GSI-2 on ``DuePaymentKey`` ``<day>#<shard>`` for every shard (or the given ones),
    in parallel: every subscription to charge that day, each once."""
    return _due_on(Subscription.due_payments, day, shards, page_size)


def _due_on(index: Any, day: date, shards: Sequence[int] | None, page_size: int | None) -> Iterator[Subscription]:
    keys = due_keys(day, shards)
    # An item has one key per index, so shards never repeat one; only while a migration
    # moves items between shards could one show twice (then repeats are dropped).
    identity = (lambda sub: sub.SK) if due_shard_layout().migrating_to else None
    return parallel_items([partial(index.query, key, page_size=page_size) for key in keys], identity=identity)
