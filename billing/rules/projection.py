"""The one projection of a subscription's coming charges: what each of its next payments
will charge, and for which days, walked forward exactly as the payment run advances it.

Every amount still to come comes from here: the payment run charges the first element
(``billing.operations.payments.owed_*``), and the dashboard, the subscription, switch and
cancel pages, the reminder and switch e-mails and the staff's upcoming days show the same
elements. So what a customer is shown is what is charged (docs/DESIGN-NOTES.md "Money
rules", "Coupons", "Free trials").

The walk (DESIGN.md M1, paid in advance):

* the **owed period** first, charged on ``NextPaymentDate`` (a retry date while past
  due): from ``BillingPeriod`` (past due) or ``NextPaymentDate``; the first payment
  (``LastPaymentDate`` is still that day: at subscribing, or the first after a free
  trial) runs to the day before the first anchor date, any other to
  ``schedule.period_end`` (after a change of payment day: the prorated days plus a month);
* then each following period, from the day after the one before to its ``period_end``,
  charged on its first day;
* each at ``PaymentAmount`` (a scheduled downgrade already holds the new price, which the
  next payment is the first to charge; an upgrade holds it from the day it is made),
  prorated by day (``schedule.period_amount``);
* less the coupon's discount for *that* payment (``rules.coupons``): every payment while
  ``CouponPaymentsLeft`` is absent (for ever), else the next N, one used per payment, as
  the run's advance uses them (a payment the coupon takes wholly is still one).

A free trial and a pause need nothing of their own: nothing is due during them (the first
charge is due the day after the trial, or on the pause's first payment), so their days
never appear. An open pause, or a subscription that is not live, has no coming charge.

Pure: nothing here reads settings, the clock or the database. It reads only attributes
both due indexes project (GSI-2 in full; GSI-1 lacks ``LastPaymentDate`` and
``BillingPeriod``: the reminder run says which period starts, ``first``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from enum import StrEnum

from billing.models import Subscription, SubscriptionStatus
from billing.rules.coupons import after_payment, discount
from billing.rules.invoice_tax import TaxTerms
from billing.rules.pricing import UsagePart
from billing.rules.schedule import (
    Schedule,
    anchor_on_or_before,
    cadence_of,
    first_period,
    is_anchor,
    next_payment_date,
    period_amount,
    period_end,
)
from billing.rules.tax import TaxLine


class ChargeKind(StrEnum):
    """Why a coming charge covers the days it does (for the words a page puts next to it)."""

    FIRST = "first"  # the first payment: from the day subscribed (or after the trial) to the first anchor
    OVERDUE = "overdue"  # a past-due period, retried on this date
    PRORATED = "prorated"  # after a change of payment day: prorated days plus a month
    REGULAR = "regular"  # one anchor month
    # After a cancel at period end: the last period's usage alone, the day after its last day
    # (no fee: nothing is paid in advance any more)
    FINAL_USAGE = "final_usage"


@dataclass(frozen=True)
class ComingCharge:
    """One payment still to come, in minor units of the subscription's currency."""

    date: date  # the day the payment run charges it
    period_start: date
    period_end: date  # inclusive
    list_price: int  # the days at the price in force, prorated by day, before any coupon
    discount: int  # what the coupon takes off this payment
    amount: int  # what is charged: ``list_price - discount``, plus the tax when prices exclude it
    kind: ChargeKind
    coupon: str | None = None  # the coupon's code while the subscription has one (even at 0 off)
    # The payment's tax (``invoice_tax.TaxTerms.line`` of ``list_price - discount`` on
    # ``date``), when the walk was given the terms: ``amount`` is its gross.
    tax_line: TaxLine | None = None

    @property
    def full_month(self) -> bool:
        """The period is exactly one period of the cadence (an anchor month for a monthly
        one; its price is the price): a page says "prorated" only when it is not."""
        return self.period_end + timedelta(days=1) == next_payment_date(self._payment_day, self.period_start) \
            and is_anchor(self._payment_day, self.period_start)

    # The cadence the period was cut on (``full_month``); set by ``coming_charges``.
    _payment_day: Schedule = field(default=1, repr=False, compare=False)
    # Each metered price's usage of the period just ended, billed in arrears with this
    # payment (``with_usage``), the subscription's first metered price first: ``amount``
    # and ``tax_line`` then include them. Empty: no usage billed.
    usages: tuple[MeteredUsage, ...] = ()

    @property
    def usage_amount(self) -> int:
        """The usage's amount before tax, every metered price's together."""
        return sum(u.amount for u in self.usages)

    @property
    def usage_last_day(self) -> date:
        """The last day whose usage the charge bills (a price removed now ends before it)."""
        return max(u.end for u in self.usages) - timedelta(days=1)


@dataclass(frozen=True)
class MeteredUsage:
    """The usage a payment bills in arrears: a metered price's quantity over the days
    ``[start, end)`` (billing days, as the usage is counted) and its amount before tax."""

    price_id: str
    meter: str  # the meter's event name
    start: date
    end: date  # exclusive: the first day of the period this payment pays in advance
    quantity: int
    amount: int  # minor units: ``pricing.amount_for(the price's terms, quantity)``
    # How ``amount`` adds up (``pricing.amount_parts``): the invoice's lines, one a tier;
    # the price's unit ("call") to word them. Empty: one usage line.
    parts: tuple[UsagePart, ...] = ()
    unit_label: str | None = None
    # The events counted in it, when read from the aggregates (0 when priced again from a
    # charge's metadata): a period used at 0 by events of 0 is still billed, with a receipt
    # of 0, where no event at all is "nothing used". Not part of what a usage is worth, so
    # not compared.
    events: int = field(default=0, compare=False)


def usage_words(usages: tuple[MeteredUsage, ...]) -> str:
    """The usage so far as a reminder or a page names it: "1235 api_calls, 30 storage_gb"
    (a meter's event name is its own word in every language)."""
    return ", ".join(f"{u.quantity} {u.meter}" for u in usages)


def with_usage(charge: ComingCharge, usages: tuple[MeteredUsage, ...], tax: TaxTerms | None = None) -> ComingCharge:
    """``charge`` plus the usage of the period before it (each metered price's): one
    payment. The tax is the invoice's, once on the whole (the fixed fee after its coupon,
    plus the usage, which no coupon discounts), on the payment's day, as a charge of all
    of it is taxed."""
    price = charge.list_price - charge.discount + sum(u.amount for u in usages)
    line = tax.line(price, charge.date) if tax is not None else None
    return replace(charge, amount=line.gross if line else price, tax_line=line, usages=usages)


def usage_period_start(sub: Subscription, charge: ComingCharge) -> date | None:
    """The first day of the usage ``charge`` bills in arrears: the first day of the period
    the last payment paid for (``LastPaymentDate``), so that consecutive payments bill
    consecutive days whatever happened between them (a first period of a few days, a
    change of payment day, a pause): no day is closed without being billed. None for the
    first payment (nothing was used before it; a trial's days are free). An item without
    ``LastPaymentDate`` (read from GSI-1, which does not project it) falls back to the
    cadence's date before the period, which is the same day for a regular renewal."""
    if charge.kind == ChargeKind.FIRST:
        return None
    if sub.LastPaymentDate and sub.LastPaymentDate < charge.period_start.isoformat():
        return date.fromisoformat(sub.LastPaymentDate)
    return anchor_on_or_before(cadence_of(sub), charge.period_start - timedelta(days=1))


def _is_first(sub: Subscription, start: date) -> bool:
    return sub.LastPaymentDate == start.isoformat()


def coming_charges(sub: Subscription, count: int = 3, *, price: int | None = None,
                   first: bool | None = None, tax: TaxTerms | None = None) -> list[ComingCharge]:
    """The subscription's next ``count`` payments, soonest first ([] when none is due: not
    live (``incomplete`` included: nothing of it is to come until confirmed), or paused with
    no end). ``price``: the monthly price to charge instead of
    ``PaymentAmount`` (what a switch would make it). ``first``: whether the owed period is
    the first payment's, for an item read without ``LastPaymentDate`` (GSI-1); by default
    known from ``LastPaymentDate`` as the run knows it. ``tax``: the seller and buyer
    (``billing.access.tax_terms``): each charge's tax, after the coupon; with prices that
    exclude tax, ``amount`` is the price plus the tax (without: tax-inclusive, the price)."""
    if not sub.is_live:
        return []
    return _owed_then_following(sub, count, price=price, first=first, tax=tax)


def _owed_then_following(sub: Subscription, count: int, *, price: int | None = None,
                         first: bool | None = None, tax: TaxTerms | None = None) -> list[ComingCharge]:
    if count <= 0 or not sub.NextPaymentDate:
        return []
    monthly = int(sub.PaymentAmount if price is None else price)
    day = cadence_of(sub)
    start = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    is_first = _is_first(sub, start) if first is None else first
    end = first_period(day, start)[1] if is_first else period_end(day, start)
    on = date.fromisoformat(sub.NextPaymentDate)
    if sub.Status == SubscriptionStatus.PAST_DUE and sub.BillingPeriod:
        kind = ChargeKind.OVERDUE
    elif is_first:
        kind = ChargeKind.FIRST
    elif is_anchor(day, start) and end == next_payment_date(day, start) - timedelta(days=1):
        kind = ChargeKind.REGULAR
    else:
        kind = ChargeKind.PRORATED
    left = None if sub.CouponPaymentsLeft is None else int(sub.CouponPaymentsLeft)
    return _walk(Terms(monthly, day, sub.CouponCode or None, sub.CouponPercentOff, sub.CouponAmountOff, left),
                 on, start, end, kind, count, tax)


@dataclass(frozen=True)
class Terms:
    """What the walk charges by: the price of a period (``monthly``: a month's for the
    monthly cadence), the payment day or cadence, and the coupon."""

    monthly: int
    payment_day: Schedule
    coupon: str | None = None
    percent_off: int | None = None
    amount_off: int | None = None
    coupon_payments_left: int | None = None  # None: every payment (for ever)


def new_subscription_charges(terms: Terms, first_day: date, count: int = 3, *,
                             tax: TaxTerms | None = None) -> list[ComingCharge]:
    """The coming charges of a subscription not made yet, whose first charge is on
    ``first_day`` (today, or the day after a free trial): the subscribe confirm page's
    first payment and what its coupon takes off each payment."""
    start, end = first_period(terms.payment_day, first_day)
    return _walk(terms, first_day, start, end, ChargeKind.FIRST, count, tax)


def _walk(terms: Terms, on: date, start: date, end: date, kind: ChargeKind, count: int,
          tax: TaxTerms | None = None) -> list[ComingCharge]:
    day = terms.payment_day
    coupon, left = terms.coupon, terms.coupon_payments_left
    charges: list[ComingCharge] = []
    while True:
        list_price = period_amount(terms.monthly, day, start, end)
        in_force = bool(coupon) and (left is None or left > 0)
        off = discount(list_price, percent_off=terms.percent_off, amount_off=terms.amount_off) if in_force else 0
        # Coupons and proration apply to the price first, the tax after (per payment).
        line = tax.line(list_price - off, on) if tax is not None else None
        charges.append(ComingCharge(on, start, end, list_price, off, line.gross if line else list_price - off, kind,
                                    coupon if in_force else None, tax_line=line, _payment_day=day))
        if len(charges) >= count:
            return charges
        # The run's advance: paid through ``end``, one of the coupon's payments used (the
        # coupon leaves the subscription with its last one).
        if coupon and left is not None:
            left = after_payment(left)
            if not left:
                coupon = None
        start = on = end + timedelta(days=1)
        end = period_end(day, start)
        kind = ChargeKind.REGULAR if is_anchor(day, start) else ChargeKind.PRORATED


def owed_charges(sub: Subscription, count: int, *, tax: TaxTerms | None = None) -> list[ComingCharge]:
    """The owed charge and those after it, for a live subscription or an ``incomplete``
    one, whose first charge waits for the customer's bank (confirming it records the
    first of these): what the confirmation e-mail says its coupon takes off."""
    if sub.Status == SubscriptionStatus.INCOMPLETE:
        return _owed_then_following(sub, count, tax=tax)
    return coming_charges(sub, count, tax=tax)


def owed_charge(sub: Subscription, *, tax: TaxTerms | None = None) -> ComingCharge:
    """The payment the run takes next (``coming_charges``' first): the subscription must
    have a ``NextPaymentDate`` and be live, or be ``incomplete``: its first charge waits
    for the customer's bank, and confirming it records this period (it is in no total and
    on no page's coming payments, but what it owes is the same walk's)."""
    return owed_charges(sub, 1, tax=tax)[0]


def next_full_month(sub: Subscription, *, price: int | None = None, within: int = 14,
                    tax: TaxTerms | None = None) -> ComingCharge | None:
    """The first coming payment for one whole anchor month, after the coupon in force for
    it: what a month of the subscription costs from its next full month (the dashboard's
    monthly total). None when nothing is due."""
    for charge in coming_charges(sub, within, price=price, tax=tax):
        if charge.full_month:
            return charge
    return None
