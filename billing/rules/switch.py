"""Switching a subscription to another product, as Stripe Billing, Kill Bill and
Lago do it: an **upgrade** (a higher monthly price) applies at once, a **downgrade** (the
same or a lower price) from the next payment.

An upgrade's money, for the days already paid from today to ``PaidThroughDate``
(M1, paid in advance, day for day):

* the **charge**: those days at the new price, by the schedule's own rule
  (``schedule.period_amount``: each anchor period's days' share, rounded half up);
* the **credit**: what was paid for those days at the old price, each charge that paid
  them by its unused days' share (``lifecycle.unused_share``, as a cancel-now refund),
  never more than is left of it after refunds;
* the **difference** is charged now (one receipt, ``Kind="switch"``, showing both lines),
  or, should the credit exceed the charge (the days were paid at a higher price, before
  a downgrade not yet in force), refunded now from the receipts that paid them.

During a free trial the trial's days are free whatever the product: an upgrade charges
nothing for them (nothing was paid for them, so nothing is credited either), and the first
charge after the trial is at the new price.

A downgrade charges and refunds nothing: the next payment, ``NextPaymentDate``, is the
first at the new price, and until then the customer keeps the product they paid for.
Either way the subscription keeps its id, payment day, card and history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.utils.translation import gettext_lazy as _

from billing.models import Product, ProductStatus, Receipt, Subscription, SubscriptionStatus
from billing.rules.cadence_words import ONLY_MONTHLY_SWITCH
from billing.rules.lifecycle import unused_share
from billing.rules.schedule import cadence_of, period_amount


class SwitchRefused(ValueError):
    """The switch cannot be made; ``str()`` says why, for the page."""


@dataclass(frozen=True)
class SwitchQuote:
    """What a switch costs (minor units of the subscription's currency), as the confirm
    page shows it and the switch then charges."""

    old_sku: str
    new_sku: str
    new_name: str
    old_price: int
    new_price: int
    upgrade: bool
    effective: date  # the first day of the new product: today (upgrade) or the next payment (downgrade)
    paid_through: date | None  # the last day already paid (the upgrade's days run today..this)
    charge: int = 0  # the paid days at the new price (upgrade)
    credit: int = 0  # their unused share at the old price (upgrade)
    trial_end: date | None = None  # the last day of a free trial still running: free whatever the product

    @property
    def due_now(self) -> int:
        """What is charged at once: the difference, never below nothing."""
        return max(0, self.charge - self.credit)

    @property
    def refund_now(self) -> int:
        """What is refunded at once: the credit above the charge (an upgrade only)."""
        return max(0, self.credit - self.charge) if self.upgrade else 0

    @property
    def signed_difference(self) -> int:
        """The charge less the credit, as the confirm page shows it (negative: kept)."""
        return self.charge - self.credit


def check_switch(sub: Subscription, product: Product | None, today: date) -> Product:
    """The product, if ``sub`` may switch to it today; else ``SwitchRefused``."""
    if product is None or product.Status != ProductStatus.ACTIVE:
        raise SwitchRefused(_("That product is not offered."))
    if product.SKU == sub.SKU:
        raise SwitchRefused(_("The subscription is already to that product."))
    if product.Currency != sub.Currency:
        raise SwitchRefused(_("That product is priced in another currency."))
    if sub.Status != SubscriptionStatus.ACTIVE:
        raise SwitchRefused(_("Only an active subscription can switch (a past-due one pays what it owes first)."))
    if sub.CancelMode or sub.PausedFrom or not sub.NextPaymentDate:
        raise SwitchRefused(_("A paused or cancelling subscription cannot switch."))
    if not cadence_of(sub).is_monthly:
        raise SwitchRefused(ONLY_MONTHLY_SWITCH)
    if sub.Quantity is not None and int(sub.Quantity) != 1:
        # A product's price is one seat's; the switch's amounts are worked out for one.
        raise SwitchRefused(_("A subscription of several seats cannot switch product: change it to one seat first."))
    if sub.LastSwitchDate == today.isoformat():
        raise SwitchRefused(_("The subscription has switched today already: switch again tomorrow."))
    return product


def quote_switch(sub: Subscription, product: Product, receipts: Iterable[Receipt], today: date) -> SwitchQuote:
    """The switch's amounts (``check_switch`` first). ``receipts``: the subscription's
    receipts that may pay days after today (the last few months')."""
    old_price, new_price = int(sub.PaymentAmount), int(product.PaymentAmount)
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    common: dict[str, Any] = {"old_sku": sub.SKU, "new_sku": product.SKU, "new_name": product.Name,
                              "old_price": old_price, "new_price": new_price, "paid_through": paid_through}
    trial_end, paid_from = trial_end_of(sub, today), first_paid_day(sub, today)
    common["trial_end"] = trial_end
    if new_price <= old_price:
        return SwitchQuote(upgrade=False, effective=date.fromisoformat(sub.NextPaymentDate), **common)
    if paid_through is None or paid_through < paid_from:
        return SwitchQuote(upgrade=True, effective=today, **common)  # nothing paid ahead: nothing to settle
    charge = period_amount(new_price, cadence_of(sub), paid_from, paid_through)
    credit = sum(unused_credit(r, paid_from) for r in receipts if r.sub_id == sub.sub_id)
    return SwitchQuote(upgrade=True, effective=today, charge=charge, credit=credit, **common)


def trial_end_of(sub: Subscription, today: date) -> date | None:
    """The last day of a free trial still running on ``today``, else None."""
    return date.fromisoformat(sub.TrialEnd) if sub.TrialEnd and sub.TrialEnd >= today.isoformat() else None


def first_paid_day(sub: Subscription, today: date) -> date:
    """The first day from ``today`` on that a change of price settles now: today, or the
    day after a free trial still running. A free trial's days are free whatever the
    product or the seats (docs/MONEY.md "Free trials"): a change charges nothing for them,
    and the first charge after the trial is at the new price. Only the days paid after
    the trial, if any, are settled (up to ``PaidThroughDate``)."""
    trial_end = trial_end_of(sub, today)
    return max(today, trial_end + timedelta(days=1)) if trial_end else today


def unused_credit(receipt: Receipt, today: date) -> int:
    """What ``receipt`` paid for the days from ``today`` on, less what was refunded of it."""
    if not receipt.PeriodEnd or receipt.PeriodEnd < today.isoformat():
        return 0
    start = date.fromisoformat(receipt.PeriodStart or receipt.BillingDate)
    share = unused_share(int(receipt.ProcessedAmount), start, date.fromisoformat(receipt.PeriodEnd),
                         today - timedelta(days=1))
    return max(0, min(share, receipt.net_amount))
