"""Add-ons: further fixed prices on one subscription, beside its plan (Stripe's several
licensed items on one subscription; Kill Bill's add-on plans). docs/PRICING.md, "Add-ons".

**What.** An add-on is an active fixed price of another product, for one unit, in the
subscription's currency, on its cadence (interval and count, so one payment pays a period
of each) and taxed alike (its amounts include the tax as the subscription's do, or not).
At most ``MAX_ADD_ONS``, each price once.

**When: from the next payment, both ways** (Kill Bill's ``END_OF_TERM`` change policy for
add-ons). Added, the add-on is billed by every payment from the next one (``FirstDay``);
removed, it stays until then, paid for, and no payment after its ``LastDay`` (the last
day paid) bills it. So no day is granted unpaid and none is paid twice (M7), and nothing
is charged or refunded now: the next payment is simply the plan's fee plus the add-ons it
bills. An add-on added and removed again before that payment is gone without a trace in
money.

**The fee.** ``PaymentAmount`` stays what the next payment's fixed items cost a period
(DESIGN §10): the plan's part plus every add-on that payment bills. The due indexes, the
projection, the reminders, coupons (on the whole fee, as a Stripe coupon on the whole
invoice), the tax and every credit read the one amount unchanged; a change of seats and
a switch price the plan's part (``plan_amount``). The invoice shows the fee as one line an
item: the plan's, then each add-on's, the fee (after proration and coupon) and its tax
shared in proportion to their prices (``fee_shares``: they sum to the fee exactly).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing.models import AddOnMap, Subscription, SubscriptionStatus
from billing.rules.cadence_words import amount_per_period
from billing.rules.schedule import cadence_of
from billing.rules.switch import SwitchRefused, switch_pending, usage_only
from billing.rules.usage_lines import share_tax
from core.money import format_with_symbol

MAX_ADD_ONS = 5


class AddOnRefused(SwitchRefused):
    """The add-on cannot be added or removed; ``str()`` says why, for the page. A kind of
    ``SwitchRefused``: a change of what a subscription pays, refused for its state."""


@dataclass(frozen=True)
class AddOn:
    """One add-on as the subscription holds it."""

    price_id: str
    name: str
    amount: int  # minor units, a period
    first_day: date  # the first payment day that bills it
    last_day: date | None = None  # removed: the last day paid for

    def billed_on(self, day: date) -> bool:
        """Whether the payment of the period starting ``day`` bills it."""
        return self.first_day <= day and (self.last_day is None or day <= self.last_day)

    def stored(self) -> AddOnMap:
        return AddOnMap(PriceId=self.price_id, Name=self.name, Amount=self.amount,
                        FirstDay=self.first_day.isoformat(),
                        LastDay=self.last_day.isoformat() if self.last_day else None)


@dataclass(frozen=True)
class AddOnOffer:
    """A price that may be added: what a page lists and ``check_add`` is given."""

    price_id: str
    sku: str
    name: str
    amount: int
    currency: str
    interval: str
    interval_count: int
    per_seat: bool = False
    sold_as_add_on: bool = True  # its product's choice (``Product.AddOn``): else offered on its own only


def add_ons_of(sub: Any) -> list[AddOn]:
    """Every add-on the subscription lists, ended ones too, in the order added."""
    return [AddOn(entry.PriceId, entry.Name, int(entry.Amount), date.fromisoformat(entry.FirstDay),
                  date.fromisoformat(entry.LastDay) if entry.LastDay else None)
            for entry in sub.AddOns or []]


def billed_on(sub: Any, day: date) -> list[AddOn]:
    """The add-ons the payment of the period starting ``day`` bills, in the order added."""
    return [add_on for add_on in add_ons_of(sub) if add_on.billed_on(day)]


def next_add_ons(sub: Any) -> list[AddOn]:
    """The add-ons the next payment bills (``PaymentAmount`` includes them)."""
    next_day = sub.NextPaymentDate
    if not next_day:
        return [add_on for add_on in add_ons_of(sub) if add_on.last_day is None]
    return billed_on(sub, date.fromisoformat(next_day))


def add_ons_amount(sub: Any) -> int:
    """What the next payment's add-ons cost a period (minor units)."""
    return sum(add_on.amount for add_on in next_add_ons(sub))


def plan_amount(sub: Any) -> int:
    """The plan's part of the fee a period: ``PaymentAmount`` less its add-ons'."""
    return int(sub.PaymentAmount) - add_ons_amount(sub)


def current_add_ons(sub: Any, today: date) -> list[AddOn]:
    """The add-ons in force today or from the next payment: not ended before ``today``."""
    return [add_on for add_on in add_ons_of(sub) if add_on.last_day is None or add_on.last_day >= today]


def add_ons_words(sub: Any, today: date, day: Callable[[date], str]) -> list[str]:
    """Each add-on in force on ``today`` or to come, in words, in the active language:
    "Extra storage: $3.00 a month", "…, from 10 Apr 2027" (billed from that payment on),
    "…, until 9 May 2027" (removed: the last day paid). ``day``: a date as the page words it."""
    shown = []
    cadence = cadence_of(sub)
    for add_on in current_add_ons(sub, today):
        words = f"{add_on.name}: {amount_per_period(format_with_symbol(add_on.amount, sub.Currency), cadence)}"
        if add_on.last_day is not None:
            words = gettext("%(add_on)s, until %(date)s") % {"add_on": words, "date": day(add_on.last_day)}
        elif add_on.first_day > today:
            words = gettext("%(add_on)s, from %(date)s") % {"add_on": words, "date": day(add_on.first_day)}
        shown.append(words)
    return shown


def fee_shares(plan: int, add_ons: Sequence[int], fee: int) -> list[int]:
    """``fee`` (a period's fee after proration and coupon) shared by the plan's price and
    each add-on's, in proportion, by largest remainder: they sum to ``fee`` exactly."""
    return share_tax(fee, [max(plan, 0), *add_ons])


def split_fee(plan: int, add_ons: Sequence[int], *, net: int, tax: int, gross: int,
              prices_include_tax: bool) -> list[tuple[int, int, int]]:
    """The fee's invoice line (``net``, ``tax``, ``gross``) as one line an item, the plan's
    first: each item's share of the price (the gross when prices include the tax, else the
    net; ``fee_shares``), and of the tax in proportion to it. Each line is (net, tax,
    gross); they sum to the one line exactly."""
    price = gross if prices_include_tax else net
    shares = fee_shares(plan, add_ons, price)
    taxes = share_tax(tax, shares)
    if prices_include_tax:
        return [(share - part, part, share) for share, part in zip(shares, taxes, strict=True)]
    return [(share, part, share + part) for share, part in zip(shares, taxes, strict=True)]


def _check_state(sub: Subscription, today: date) -> None:
    """A change of add-ons, as a change of seats, only on an active subscription that is
    neither paused, cancelling nor switching, and not on its payment day (the run may be
    charging the fee as it was)."""
    if sub.Status != SubscriptionStatus.ACTIVE:
        raise AddOnRefused(_("Only an active subscription can change its add-ons (a past-due one pays what it "
                             "owes first)."))
    if sub.CancelMode or sub.PausedFrom or not sub.NextPaymentDate:
        raise AddOnRefused(_("A paused or cancelling subscription cannot change its add-ons."))
    if switch_pending(sub, today):
        raise AddOnRefused(_("A switch of product waits for your next payment: change the add-ons after it."))
    if sub.NextPaymentDate <= today.isoformat():
        raise AddOnRefused(_("Today's payment is due: change the add-ons once it is taken."))


def offer_refusal(sub: Subscription, offer: AddOnOffer, today: date) -> str | None:
    """Why ``offer`` cannot be added to ``sub`` now (None: it can); the state's reasons
    first (``check_add`` raises the same words)."""
    try:
        check_add(sub, offer, today)
    except AddOnRefused as refused:
        return str(refused)
    return None


def check_add(sub: Subscription, offer: AddOnOffer, today: date) -> AddOn:
    """The add-on ``offer`` makes, billed from the next payment; else ``AddOnRefused``."""
    _check_state(sub, today)
    if usage_only(sub):
        raise AddOnRefused(_("A subscription to usage alone has no fixed fee to add to: it pays for its usage."))
    check_offer(offer, sku=sub.SKU, currency=sub.Currency, interval=sub.Interval, interval_count=sub.IntervalCount,
                billed=next_add_ons(sub))
    return AddOn(offer.price_id, offer.name, offer.amount, date.fromisoformat(sub.NextPaymentDate))


def check_offer(offer: AddOnOffer, *, sku: str, currency: str, interval: str | None, interval_count: int | None,
                billed: Sequence[AddOn | AddOnOffer] = ()) -> None:
    """``AddOnRefused`` unless ``offer`` may be an add-on of a plan of product ``sku``, in
    ``currency``, on that cadence (None: monthly), beside the add-ons ``billed``: another
    product's price, that product sold as an add-on, in the same currency and cadence, not
    by the seat, not billed already, and at most ``MAX_ADD_ONS``. A running subscription's and a new one's alike."""
    if offer.sku == sku:
        raise AddOnRefused(_("That is a price of your plan's own product: switch to it instead."))
    if not offer.sold_as_add_on:
        raise AddOnRefused(_("That product is not sold as an add-on."))
    if offer.currency.upper() != currency.upper():
        raise AddOnRefused(_("That add-on is priced in another currency than the subscription."))
    if (offer.interval, int(offer.interval_count)) != (interval or "month", int(interval_count or 1)):
        raise AddOnRefused(_("That add-on is billed over other periods than the subscription's."))
    if offer.per_seat:
        raise AddOnRefused(_("A price sold by the seat cannot be an add-on: subscribe to it on its own."))
    if any(add_on.price_id == offer.price_id for add_on in billed):
        raise AddOnRefused(_("The subscription has that add-on already."))
    if len(billed) >= MAX_ADD_ONS:
        raise AddOnRefused(_("A subscription has at most %(n)s add-ons.") % {"n": MAX_ADD_ONS})


@dataclass(frozen=True)
class AddOnsChange:
    """A change of add-ons, as ``write_add_ons`` writes it: the list after it and the fee
    of the next payment before and after."""

    add_ons: tuple[AddOn, ...]
    old_price: int
    new_price: int
    effective: date  # the next payment: the first the change is billed by
    price_id: str  # the add-on added or removed
    added: bool
    name: str = ""  # its product's name
    amount: int = 0  # its price a period

    def stored(self) -> list[AddOnMap]:
        return [add_on.stored() for add_on in self.add_ons]


def adding(sub: Subscription, offer: AddOnOffer, today: date) -> AddOnsChange:
    """``sub`` with ``offer`` added from its next payment (``check_add``'s refusals)."""
    add_on = check_add(sub, offer, today)
    kept = current_add_ons(sub, today)
    old = int(sub.PaymentAmount)
    for n, entry in enumerate(kept):
        if entry.price_id == add_on.price_id:  # removed, still paid for: kept on, at the price it has
            kept[n] = AddOn(entry.price_id, entry.name, entry.amount, entry.first_day)
            return AddOnsChange(tuple(kept), old, old + entry.amount, add_on.first_day, add_on.price_id, True,
                                entry.name, entry.amount)
    return AddOnsChange((*kept, add_on), old, old + add_on.amount, add_on.first_day, add_on.price_id, True,
                        add_on.name, add_on.amount)


def removing(sub: Subscription, price_id: str, today: date) -> AddOnsChange:
    """``sub`` without the add-on ``price_id`` from its next payment: kept, paid for, until
    then (its ``LastDay`` the day before), or gone at once when no payment billed it yet."""
    _check_state(sub, today)
    kept: list[AddOn] = []
    found = None
    next_day = date.fromisoformat(sub.NextPaymentDate)
    for entry in current_add_ons(sub, today):  # those ended before today are paid: dropped
        if entry.price_id == price_id and entry.last_day is None:
            found = entry
            if entry.first_day < next_day:  # billed already: it stays until the next payment
                kept.append(AddOn(entry.price_id, entry.name, entry.amount, entry.first_day,
                                  next_day - timedelta(days=1)))
            continue
        kept.append(entry)
    if found is None:
        raise AddOnRefused(_("The subscription has no such add-on."))
    old = int(sub.PaymentAmount)
    return AddOnsChange(tuple(kept), old, old - found.amount, next_day, price_id, False, found.name, found.amount)
