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

**Switching price or cadence** (docs/MONEY.md "Switching price or cadence"): the target is
any active price of the same product or of another one (``SwitchTarget``), whatever its
cadence, and when it applies follows Stripe's customer portal with its "schedule at
period end" conditions (shortening the interval, lowering the amount):

* the **same cadence**: the rule above, by the price of a period;
* a **longer or equal interval** (monthly to yearly, weekly to monthly): at once, and the
  new cadence's first full period starts today (Stripe resets the billing cycle anchor
  when the interval changes): the **charge** is the new price of that whole period, the
  **credit** what paid the unused days of the current one (today to ``PaidThroughDate``,
  as above); today becomes the anchor (its day the payment day);
* a **shorter interval** (yearly to monthly, monthly to weekly): at the end of the paid
  period, as a downgrade: nothing charged or refunded, and the next payment
  (``NextPaymentDate``) is the first of the new cadence, anchored on it.

During a free trial nothing is paid: a change of cadence settles nothing, and the first
charge after the trial is the new price's (anchored as subscribing to it with a trial is).

**Seats** (docs/MONEY.md "Switching price or cadence"): a subscription of N seats keeps
them, as a Stripe subscription item's quantity carries over a change of price. The new
price a period is the target's for N seats (its unit amount × N, or its tiers' amount for
N), compared with the whole price paid now (``PaymentAmount``), and settled by the same
rules; the credit is the receipts', which paid for the N seats. N must be within the
target's bounds, and a price not sold by the seat takes one seat only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.utils.translation import gettext_lazy as _

from billing.models import Product, ProductStatus, Receipt, Subscription, SubscriptionStatus
from billing.rules.invoice_tax import refund_share
from billing.rules.lifecycle import unused_share
from billing.rules.price_objects import DEFAULT_PRICE_PREFIX, default_price_id
from billing.rules.pricing import PERIODS_A_YEAR, Interval, PriceTerms, seats_amount
from billing.rules.schedule import Cadence, cadence_of, first_period, new_cadence, period_amount


class SwitchRefused(ValueError):
    """The switch cannot be made; ``str()`` says why, for the page."""


@dataclass(frozen=True)
class SwitchTarget:
    """What a switch moves to: one price of a product (``price_id``; the product's derived
    default price, ``price_default_<SKU>``, for a switch of product as before prices)."""

    sku: str
    name: str
    amount: int  # minor units, a period of the price's cadence
    price_id: str
    currency: str
    interval: Interval = Interval.MONTH
    count: int = 1
    # Sold by the seat: a subscription of N seats keeps them, within these bounds (a price
    # not by the seat is for one). ``terms``: a price by tiers of seats (its amount for N
    # is its tiers', no one price a seat).
    per_seat: bool = False
    min_quantity: int = 1
    max_quantity: int | None = None
    terms: PriceTerms | None = None
    # A metered price, alone: no fixed fee from the next payment, that price billing the
    # usage (a plan to pay-as-you-go; docs/USAGE.md "Usage alone"). ``amount`` is 0.
    metered: bool = False
    # That metered price's terms and unit, for its words on a page (never its amount: 0).
    usage_terms: PriceTerms | None = None
    usage_unit: str | None = None

    def amount_for(self, seats: int) -> int:
        """A period of the price for ``seats`` seats (minor units): one seat's × seats, or
        the tiers' amount."""
        return seats_amount(seats, unit=int(self.amount), terms=self.terms)

    @property
    def unit_amount(self) -> int | None:
        """One seat's price a period; None for a price by tiers of seats."""
        return None if self.terms is not None else int(self.amount)

    @property
    def stored_price_id(self) -> str | None:
        """The subscription's ``PriceId``: none for the product's default price, nor for
        usage alone (its metered price is its ``MeteredPriceId``)."""
        return None if self.metered or self.price_id.startswith(DEFAULT_PRICE_PREFIX) else self.price_id

    def same_cadence(self, cadence: Cadence) -> bool:
        return (Interval(self.interval), int(self.count)) == (cadence.interval, cadence.count)


def default_target(product: Product) -> SwitchTarget:
    """A product's default price (monthly, its ``PaymentAmount``): the switch of product."""
    return SwitchTarget(product.SKU, product.Name, int(product.PaymentAmount), default_price_id(product.SKU),
                        product.Currency)


def current_price_id(sub: Subscription) -> str:
    """The price the subscription pays by: its fixed price (null: its product's default),
    or, for usage alone, its metered price."""
    if usage_only(sub):
        return str(sub.MeteredPriceId)
    return sub.PriceId or default_price_id(sub.SKU)


def usage_only(sub: Subscription) -> bool:
    """A subscription to a metered price alone (Stripe's subscription whose one item is
    metered): no fixed fee (``PaymentAmount`` 0), each payment the usage of the period
    just ended (docs/USAGE.md "Usage alone")."""
    return bool(getattr(sub, "MeteredPriceId", None)) and not int(sub.PaymentAmount or 0)


def switch_pending(sub: Subscription, today: date) -> bool:
    """Whether a switch of product waits for the next payment (``SwitchFrom`` still to
    come): the customer keeps the product paid for until then. ``SwitchFrom`` stays on the
    item once that payment is made, as the day the switch took effect."""
    return bool(sub.SwitchFrom) and sub.SwitchFrom > today.isoformat()


def quantity_of(sub: Subscription) -> int:
    """The subscription's seats (null: one, as every subscription made before seats), which
    a switch keeps and a change of seats changes (``billing.rules.seats`` reads it from here)."""
    quantity = getattr(sub, "Quantity", None)
    return int(quantity) if quantity is not None else 1


def seats_refusal(sub: Subscription, target: SwitchTarget) -> str | None:
    """Why ``target`` cannot take ``sub``'s seats (None: it can): a price not sold by the
    seat takes one, a price by the seat its bounds."""
    seats = quantity_of(sub)
    if seats == 1 and not target.per_seat:
        return None
    if not target.per_seat:
        return str(_("That price is not sold by the seat: change to one seat first."))
    if seats < target.min_quantity:
        return str(_("That price is sold for at least %(low)s seats: the subscription has %(n)s.")
                   % {"low": target.min_quantity, "n": seats})
    if target.max_quantity is not None and seats > target.max_quantity:
        return str(_("That price is sold for at most %(high)s seats: the subscription has %(n)s.")
                   % {"high": target.max_quantity, "n": seats})
    return None


def longer_or_equal(target: SwitchTarget, cadence: Cadence) -> bool:
    """Whether the target's period is at least as long as ``cadence``'s (fewer or as many
    periods a year: a year is 12 months, a week 7 days by ``PERIODS_A_YEAR``)."""
    new_interval, old_interval = Interval(target.interval), cadence.interval
    return PERIODS_A_YEAR[new_interval] * cadence.count <= PERIODS_A_YEAR[old_interval] * int(target.count)


def applies_now(sub: Subscription, target: SwitchTarget) -> bool:
    """The switch's timing: the same cadence at a higher price, or a longer (or equally
    long) interval, now; the same cadence at the same or a lower price, or a shorter
    interval, from the next payment (Stripe's portal: shortening the interval or
    lowering the amount waits for the period's end)."""
    cadence = cadence_of(sub)
    if target.same_cadence(cadence):
        return target.amount_for(quantity_of(sub)) > int(sub.PaymentAmount)
    return longer_or_equal(target, cadence)


def cadence_from(sub: Subscription, target: SwitchTarget, start: date, *, restart: bool) -> Cadence:
    """The target's cadence, its first full period starting on ``start``. From the next
    payment (``restart`` False): months and years keep the payment day when the
    subscription has one (a yearly on the 29th becomes monthly on the 29th), weeks and
    days fall on ``start``'s weekday. From today (``restart``): today is the anchor, its
    day the payment day."""
    day = int(sub.PaymentDay) if not restart and cadence_of(sub).has_payment_day else start.day
    return new_cadence(day, start, target.interval, target.count)


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
    # A switch of price (docs/MONEY.md "Switching price or cadence"): the price's id (empty:
    # the new product's default price), its cadence when it is not the subscription's
    # (None: unchanged), and, when a new period starts today, its last day (charged whole).
    new_price_id: str = ""
    new_cadence: Cadence | None = None
    new_period_end: date | None = None
    # The seats the switch keeps (the subscription's) and the new price of one (None: a
    # price by tiers of seats); ``new_price`` is the whole, for the seats.
    quantity: int = 1
    unit_amount: int | None = None
    # To a metered price alone (``new_price_id``): no fixed fee from the next payment, that
    # price billing its usage from then on (docs/USAGE.md "Usage alone").
    usage_alone: bool = False

    @property
    def several_seats(self) -> bool:
        return self.quantity > 1

    @property
    def keeps_seats(self) -> bool:
        """Whether the switched subscription holds seats (``Quantity``): several, or the one
        seat of a price by tiers of seats (``unit_amount`` None), so that a later change of
        seats follows the tiers (``rules.seats.priced_by_tiers``)."""
        return self.several_seats or self.unit_amount is None

    @property
    def choice(self) -> str:
        """What the pages and the API name the target by: the SKU for a product's default
        price (a switch of product, as before prices), else the price's id."""
        if not self.new_price_id or self.new_price_id == default_price_id(self.new_sku):
            return self.new_sku
        return self.new_price_id

    @property
    def restarts(self) -> bool:
        """A new period of the new cadence starts today (a longer interval)."""
        return self.new_period_end is not None

    @property
    def charged_through(self) -> date | None:
        """The last day the switch's charge pays for: the new period's, or ``paid_through``."""
        return self.new_period_end or self.paid_through

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


def check_switch(sub: Subscription, product: Product | None, today: date,
                 target: SwitchTarget | None = None) -> Product:
    """The product, if ``sub`` may switch to it (to ``target``, one of its prices; default:
    its default price) today; else ``SwitchRefused``."""
    if product is None or product.Status != ProductStatus.ACTIVE:
        raise SwitchRefused(_("That product is not offered."))
    target = target or default_target(product)
    if product.SKU == sub.SKU and target.price_id == current_price_id(sub):
        raise SwitchRefused(_("The subscription is already to that product."))
    if target.currency.upper() != sub.Currency.upper():
        raise SwitchRefused(_("That product is priced in another currency."))
    if sub.Status != SubscriptionStatus.ACTIVE:
        raise SwitchRefused(_("Only an active subscription can switch (a past-due one pays what it owes first)."))
    if sub.CancelMode or sub.PausedFrom or not sub.NextPaymentDate:
        raise SwitchRefused(_("A paused or cancelling subscription cannot switch."))
    if target.metered and usage_only(sub):
        # Its metered prices are all it pays: another is added, removed or changed as such.
        raise SwitchRefused(_("The subscription pays for its usage alone already: add or change its metered "
                              "prices instead."))
    if target.metered and not target.same_cadence(cadence_of(sub)):
        # Usage is billed over the subscription's periods (docs/USAGE.md "One cadence").
        raise SwitchRefused(_("That metered price is billed over other periods than the subscription's."))
    if target.metered and target.price_id in getattr(sub, "metered_ends", {}):
        # Alone, a price on its way out would leave a subscription that bills nothing.
        raise SwitchRefused(_("That metered price is being removed: add it again first to keep it alone."))
    if usage_only(sub) and target.sku != sub.SKU:
        # Its metered price is its product's: a fixed price of that product joins it (the
        # usage then billed beside it); another product's would leave it billing this one's
        # usage (docs/USAGE.md "Usage alone").
        raise SwitchRefused(_("A subscription to usage alone can add a fixed price of its own product only: "
                              "subscribe to the other product, then cancel this one."))
    if any(not entry.LastDay or entry.LastDay >= today.isoformat() for entry in getattr(sub, "AddOns", None) or []):
        # Its fee is the plan's and the add-ons' (billing/rules/add_ons.py): a switch prices
        # and credits the plan alone, so the add-ons end first, with the next payment.
        raise SwitchRefused(_("A subscription with add-ons cannot switch its plan: remove its add-ons, then switch "
                              "after your next payment."))
    refusal = seats_refusal(sub, target)
    if refusal:  # the seats are kept (as Stripe keeps an item's quantity): the price must take them
        raise SwitchRefused(refusal)
    if sub.LastSwitchDate == today.isoformat():
        raise SwitchRefused(_("The subscription has switched today already: switch again tomorrow."))
    if not target.same_cadence(cadence_of(sub)) and getattr(sub, "MeteredPriceId", None):
        # Its usage is billed by the cadence's periods (docs/USAGE.md): a new cadence would
        # leave the days of usage before it unbilled.
        raise SwitchRefused(_("A subscription billed for its usage cannot change its billing period yet."))
    if not target.same_cadence(cadence_of(sub)) and sub.NextPaymentDate <= today.isoformat():
        # The payment day's lock (as a change of seats'): the run charges the old cadence's period first.
        raise SwitchRefused(_("A payment is due today: change the billing period after it is taken."))
    return product


def quote_switch(sub: Subscription, product: Product | SwitchTarget, receipts: Iterable[Receipt],
                 today: date, *, before_tax: bool = False) -> SwitchQuote:
    """The switch's amounts (``check_switch`` first). ``product``: a product (its default
    price) or a ``SwitchTarget``. ``receipts``: the subscription's receipts that may pay
    days after today (``receipts_from``). ``before_tax``: the seller's prices exclude tax,
    so the new price is before tax and the credit is counted before tax too (each
    receipt's net share): the charge and the refund add the tax once, on the difference."""
    target = product if isinstance(product, SwitchTarget) else default_target(product)
    # The seats are kept: the new price is the target's for them (the old one, PaymentAmount,
    # is already the whole for them, and so is what the receipts paid: the credit).
    seats = quantity_of(sub)
    old_price, new_price = int(sub.PaymentAmount), target.amount_for(seats)
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    next_payment = date.fromisoformat(sub.NextPaymentDate)
    common: dict[str, Any] = {"old_sku": sub.SKU, "new_sku": target.sku, "new_name": target.name,
                              "old_price": old_price, "new_price": new_price, "paid_through": paid_through,
                              "new_price_id": target.price_id, "quantity": seats,
                              "unit_amount": target.unit_amount, "usage_alone": target.metered}
    trial_end, paid_from = trial_end_of(sub, today), first_paid_day(sub, today)
    common["trial_end"] = trial_end
    cadence = cadence_of(sub)
    same = target.same_cadence(cadence)
    # A new cadence that starts at the next payment (a shorter one, or any during a trial
    # or with nothing paid ahead): its first full period begins on that day.
    from_next = None if same else cadence_from(sub, target, next_payment, restart=False)
    if not applies_now(sub, target):
        return SwitchQuote(upgrade=False, effective=next_payment, new_cadence=from_next, **common)
    if paid_through is None or paid_through < paid_from:  # nothing paid ahead: nothing to settle
        return SwitchQuote(upgrade=True, effective=today, new_cadence=from_next, **common)
    credit = sum(unused_credit(r, paid_from, before_tax=before_tax) for r in receipts if r.sub_id == sub.sub_id)
    if same:
        charge = period_amount(new_price, cadence, paid_from, paid_through)
        return SwitchQuote(upgrade=True, effective=today, charge=charge, credit=credit, **common)
    restarted = cadence_from(sub, target, today, restart=True)
    end = first_period(restarted, today)[1]  # today is its anchor: one whole period
    return SwitchQuote(upgrade=True, effective=today, charge=new_price, credit=credit, new_cadence=restarted,
                       new_period_end=end, **common)


def receipts_from(sub: Subscription, today: date, back: date) -> date:
    """The first billing day a receipt paying days after ``today`` may have: ``back`` (the
    cadence's window, ``schedule.charges_paying_from``), or the last payment's day when
    earlier (a yearly period, switched to a monthly cadence from its end, is paid by a
    charge older than the monthly window)."""
    last = date.fromisoformat(sub.LastPaymentDate) if getattr(sub, "LastPaymentDate", None) else back
    return min(back, last)


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


def unused_credit(receipt: Receipt, today: date, *, before_tax: bool = False) -> int:
    """What ``receipt`` paid for the days from ``today`` on, less what was refunded of it.
    ``before_tax`` (a seller whose prices exclude tax): the same share of its net, less the
    net of its refunds, when it has its tax figures (one without them is counted whole)."""
    if not receipt.PeriodEnd or receipt.PeriodEnd < today.isoformat():
        return 0
    start = date.fromisoformat(receipt.PeriodStart or receipt.BillingDate)
    end, last_used = date.fromisoformat(receipt.PeriodEnd), today - timedelta(days=1)
    if before_tax and receipt.Net is not None:
        return max(0, min(unused_share(int(receipt.Net), start, end, last_used), net_left(receipt)))
    share = unused_share(int(receipt.ProcessedAmount), start, end, last_used)
    return max(0, min(share, receipt.net_amount))


def net_left(receipt: Receipt) -> int:
    """The net ``receipt`` still holds after its refunds: each refund took its share of the
    tax as its credit notes did (``invoice_tax.refund_share``, rounded on the total
    refunded), the rest of it from the net."""
    gross, refunded = int(receipt.ProcessedAmount), int(receipt.RefundedAmount or 0)
    if refunded <= 0 or gross <= 0:
        return int(receipt.Net)
    tax_refunded = refund_share(tax=int(receipt.Tax or 0), gross=gross, earlier=(), refund=min(refunded, gross)).tax
    return int(receipt.Net) - (min(refunded, gross) - tax_refunded)
