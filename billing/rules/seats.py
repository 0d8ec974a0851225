"""Seats: a subscription's quantity, changed mid-period (docs/MONEY.md M7).

A subscription pays ``UnitAmount`` a seat, ``Quantity`` seats a period: ``PaymentAmount``
is their product, so the payment run, the reminders and every page charge and show the
whole as before. A change of quantity is in force at once and settles the days already
paid, from today (or the day after a free trial) to ``PaidThroughDate``:

* **more seats**: the added seats' price of those days is charged now, by the schedule's
  own rule (``schedule.period_amount``: each period's days' share, rounded half up),
  as a switch's upgrade is;
* **fewer seats**: the removed seats' price of the same days, by the same rule, is
  credited now: refunded to the card from the receipts that paid those days, each at
  most its unused share (what a cancel now would give back), never more than was paid.

Both are the same function of the seats added or removed, so adding seats and removing
them again the same day nets to nothing, and no day is charged twice or left unpaid.

A price **by tiers of seats** (a ``tiered`` price, graduated or volume, or a ``package``
price, sold by the seat) has no one price a seat: the subscription keeps ``Quantity`` and
no ``UnitAmount``, and its whole price a period is the price's ``amount_for`` the seats.
A change settles the difference of the two whole prices over the same days, by the same
rule: a charge when the new whole price is higher, a credit when it is lower (more seats
can cost less a period under volume tiers: then they are credited).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.utils.translation import gettext_lazy as _

from billing.models import Subscription, SubscriptionStatus
from billing.rules.add_ons import add_ons_amount, plan_amount
from billing.rules.price_words import price_words
from billing.rules.pricing import PriceTerms, seats_amount
from billing.rules.schedule import cadence_of, period_amount
from billing.rules.switch import (
    SwitchRefused,
    first_paid_day,
    quantity_of,
    switch_pending,
    trial_end_of,
    usage_only,
)

# The unit a price by tiers of seats counts when it names none: kept in English, as a
# merchant's own label is (price_words' "an English word takes an s").
_SEAT_UNIT = "seat"

# The bounds of a subscription whose price names none (a Price's MinQuantity/MaxQuantity).
MIN_QUANTITY = 1
MAX_QUANTITY = 10_000


class SeatsRefused(SwitchRefused):
    """The change of seats cannot be made; ``str()`` says why, for the page. A kind of
    ``SwitchRefused``: a change of what a subscription pays, refused for its state."""


class QuantityOutOfBounds(SeatsRefused):
    """The quantity is outside the price's bounds (a field error on a form, a 400 in the API)."""

    def __init__(self, low: int, high: int) -> None:
        super().__init__(_("Choose between %(low)s and %(high)s seats.") % {"low": low, "high": high})
        self.low, self.high = low, high


def unit_amount_of(sub: Subscription) -> int:
    """The price of one seat a period (null: the plan's whole price, one seat; its add-ons
    are not its seats')."""
    return int(sub.UnitAmount) if sub.UnitAmount is not None else plan_amount(sub)


def tier_price_words(terms: PriceTerms, unit_label: str | None = None) -> str:
    """A price by tiers of seats in words, in the active language: its tiers (graduated or
    volume) or its packages, "seat" its unit unless the price names another."""
    return price_words(terms, unit_label or _SEAT_UNIT)


def priced_by_tiers(sub: Subscription) -> bool:
    """Whether ``sub``'s seats are priced by its price's tiers (or packages), not one
    amount a seat: it holds seats (``Quantity``) and no ``UnitAmount``."""
    return sub.Quantity is not None and sub.UnitAmount is None


def quantity_bounds(price: Any = None) -> tuple[int, int]:
    """The quantities allowed: the subscription's price's ``MinQuantity`` and
    ``MaxQuantity`` when it names them, else ``MIN_QUANTITY``..``MAX_QUANTITY``."""
    low = getattr(price, "MinQuantity", None)
    high = getattr(price, "MaxQuantity", None)
    return (int(low) if low is not None else MIN_QUANTITY, int(high) if high is not None else MAX_QUANTITY)


def check_quantity(quantity: int, bounds: tuple[int, int] = (MIN_QUANTITY, MAX_QUANTITY)) -> int:
    """``quantity`` if within ``bounds`` (both included); else ``QuantityOutOfBounds``."""
    low, high = bounds
    if isinstance(quantity, bool) or not isinstance(quantity, int) or not low <= quantity <= high:
        raise QuantityOutOfBounds(low, high)
    return quantity


@dataclass(frozen=True)
class SeatsQuote:
    """What a change of seats costs (minor units of the subscription's currency), as the
    page shows it and ``change_quantity`` then charges or credits it."""

    old_quantity: int
    new_quantity: int
    unit_amount: int | None  # a seat's price a period; None: priced by tiers (``priced_by_tiers``)
    paid_from: date  # the first day settled now: today, or the day after a free trial
    paid_through: date | None  # the last day already paid: the change settles paid_from..this
    amount: int = 0  # the difference of the whole prices, for those days (prorated)
    trial_end: date | None = None
    old_price: int = 0  # the whole price a period at the old seats (its add-ons' included)
    new_price: int = 0  # ... and from now on: the next payments charge it

    @property
    def more(self) -> bool:
        return self.new_quantity > self.old_quantity

    @property
    def due_now(self) -> int:
        """Charged now (the whole price goes up), before tax when prices exclude it."""
        return self.amount if self.new_price > self.old_price else 0

    @property
    def credit_now(self) -> int:
        """Credited now (the whole price goes down): refunded to the card that paid those days."""
        return self.amount if self.new_price < self.old_price else 0


def check_change(sub: Subscription, quantity: int, bounds: tuple[int, int] = (MIN_QUANTITY, MAX_QUANTITY),
                 today: date | None = None) -> int:
    """``quantity``, if ``sub`` may change to it now; else ``SeatsRefused`` (or
    ``QuantityOutOfBounds``). As a switch: only an active subscription (a past-due one pays
    what it owes first; a paused or cancelling one resumes or is kept first), and not while
    a switch of product waits for the next payment (its seats would be paid at two prices).
    Nor while a payment is due (``NextPaymentDate`` on or before ``today``, the rule of the
    payment day's lock): the run may be charging the old number for the next period, and
    a change written between its charge and its advance would leave seats unpaid."""
    check_quantity(quantity, bounds)
    if sub.Status != SubscriptionStatus.ACTIVE:
        raise SeatsRefused(_("Only an active subscription can change its seats (a past-due one pays what it "
                             "owes first)."))
    if sub.CancelMode or sub.PausedFrom or not sub.NextPaymentDate:
        raise SeatsRefused(_("A paused or cancelling subscription cannot change its seats."))
    if usage_only(sub):  # no fee, so no seats to price: its metered prices are all it pays
        raise SeatsRefused(_("A subscription to usage alone has no seats: it pays for its usage."))
    # Without ``today``, any switch recorded counts as waiting (the caller did not say the day).
    if switch_pending(sub, today) if today is not None else bool(sub.SwitchFrom):
        raise SeatsRefused(_("A switch of product waits for your next payment: change the seats after it."))
    if today is not None and sub.NextPaymentDate <= today.isoformat():
        raise SeatsRefused(_("Today's payment is due: change the seats once it is taken."))
    if quantity == quantity_of(sub):
        raise SeatsRefused(_("The subscription has that many seats already."))
    return quantity


def quote_seats(sub: Subscription, quantity: int, today: date, terms: PriceTerms | None = None) -> SeatsQuote:
    """The change's amounts (``check_change`` first): the difference of the whole prices
    at the old and the new seats, for the days already paid from ``today`` (after a free
    trial: its days are free whatever the seats) to ``PaidThroughDate``, by the schedule's
    rule. ``terms``: the price's, for a subscription ``priced_by_tiers`` (else its
    ``UnitAmount`` a seat)."""
    old = quantity_of(sub)
    tiers = terms if terms is not None and priced_by_tiers(sub) else None
    unit = None if tiers is not None else unit_amount_of(sub)
    # The add-ons the next payment bills are part of the whole fee, the same before and after.
    extra = add_ons_amount(sub)
    old_price, new_price = (seats_amount(n, unit=unit, terms=tiers) + extra for n in (old, quantity))
    paid_from = first_paid_day(sub, today)
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    amount = 0
    if paid_through is not None and paid_through >= paid_from:
        amount = period_amount(abs(new_price - old_price), cadence_of(sub), paid_from, paid_through)
    return SeatsQuote(old_quantity=old, new_quantity=quantity, unit_amount=unit, paid_from=paid_from,
                      paid_through=paid_through, amount=amount, trial_end=trial_end_of(sub, today),
                      old_price=old_price, new_price=new_price)
