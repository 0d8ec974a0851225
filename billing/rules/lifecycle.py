"""The date rules of ending and pausing a subscription, pure: no I/O.

* **Cancel at period end** (the default): the subscription is cancelled at once (it
  leaves both indexes: nothing more is charged or reminded) and serves until
  ``PaidThroughDate``; until that day is over the customer may keep it, which puts the
  due keys back (next payment the day after ``PaidThroughDate``).
* **Cancel now**: the service ends today; the days paid after today are refunded, their
  share of the charge that paid them (``unused_share``).
* **Pause** (Stripe's ``pause_collection``, Chargebee's skipped cycles) starts on the
  first unpaid day, so no paid day is lost, and ends on an anchor date, so the first
  payment after it is a whole period: no charge is made for the paused days and no
  proration is needed. A pause for N payments or until a date keeps the item in the
  indexes under that first payment date only (nothing is due in between, and it
  resumes with no job); an open pause takes both due keys away until "Resume".
* **Resume** brings the first payment forward to the earliest date it can be: the day
  after ``PaidThroughDate`` while that is still ahead, else the first anchor date after
  today (today's payment run may be over).

A past-due subscription cannot be paused: its owed period would be forgiven or hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import StrEnum

from django.utils.translation import gettext_lazy as _

from billing.exceptions import PauseRefused
from billing.models import Subscription, SubscriptionStatus
from billing.rules.schedule import first_payment_date, next_payment_date, prorate

MAX_PAUSE_PAYMENTS = 12  # a pause skips at most a year of payments
MAX_PAUSE_DAYS = 366


class CancelMode(StrEnum):
    PERIOD_END = "period_end"
    NOW = "now"


# The reasons a customer may give (stored as the code; the label is for the page).
CANCEL_REASONS = [
    ("too_expensive", _("It is too expensive")),
    ("not_using", _("I am not using it")),
    ("switching", _("I am switching to something else")),
    ("missing_features", _("It is missing features I need")),
    ("other", _("Another reason")),
]


@dataclass(frozen=True)
class SubState:
    """What the customer sees: ``kind`` is one of active, past_due, cancelling, paused,
    cancelled; ``until`` is the last day of service (cancelling) or the day collection
    resumes (paused, None while the pause is open); ``since`` the first paused day."""

    kind: str
    until: date | None = None
    since: date | None = None
    # The last free day of a free trial still running (any kind but cancelled).
    trial_until: date | None = None


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def state_of(sub: Subscription, today: date) -> SubState:
    state = _state_of(sub, today)
    trial_end = _day(sub.TrialEnd)
    if trial_end and trial_end >= today and state.kind != "cancelled":
        return replace(state, trial_until=trial_end)
    return state


def _state_of(sub: Subscription, today: date) -> SubState:
    paid_through = _day(sub.PaidThroughDate)
    if sub.Status == SubscriptionStatus.CANCELLED:
        if sub.CancelMode == CancelMode.PERIOD_END and paid_through and paid_through >= today:
            return SubState("cancelling", until=paid_through)
        return SubState("cancelled")
    if sub.Status == SubscriptionStatus.PAST_DUE:
        return SubState("past_due")
    if sub.PausedFrom and not sub.NextPaymentDate:
        return SubState("paused", since=_day(sub.PausedFrom))
    until = _day(sub.PausedUntil)
    if until and until > today:
        return SubState("paused", until=until, since=_day(sub.PausedFrom))
    return SubState("active")


def can_keep(sub: Subscription, today: date) -> bool:
    """A cancel at period end may be undone until the last paid day is over."""
    return state_of(sub, today).kind == "cancelling"


def kept_next_payment(sub: Subscription) -> date:
    """Keeping a subscription: the next payment is the day after the last paid day."""
    paid_through = _day(sub.PaidThroughDate)
    assert paid_through is not None
    return paid_through + timedelta(days=1)


def check_pausable(sub: Subscription, today: date) -> date:
    """The subscription's next payment date, if it may be paused today; else PauseRefused."""
    if sub.Status == SubscriptionStatus.PAST_DUE:
        raise PauseRefused(_("A payment is overdue: pay it (replace the card) before pausing."))
    if sub.Status != SubscriptionStatus.ACTIVE:
        raise PauseRefused(_("This subscription is cancelled."))
    if state_of(sub, today).kind == "paused":
        raise PauseRefused(_("This subscription is already paused."))
    next_payment = _day(sub.NextPaymentDate)
    if next_payment is None or next_payment <= today:
        raise PauseRefused(_("Today's payment is being taken: pause it tomorrow."))
    return next_payment


def pause_end(sub: Subscription, today: date, *, payments: int | None = None, until: date | None = None) -> date | None:
    """The first payment after a pause that skips ``payments`` payments, or that lasts
    until ``until`` (the first anchor date on or after it); None for an open pause."""
    next_payment = check_pausable(sub, today)
    day = int(sub.PaymentDay)
    if payments is not None:
        if not 1 <= payments <= MAX_PAUSE_PAYMENTS:
            raise PauseRefused(_("Skip between 1 and %(most)d payments.") % {"most": MAX_PAUSE_PAYMENTS})
        resume = next_payment
        for _n in range(payments):
            resume = next_payment_date(day, resume)
        return resume
    if until is not None:
        if until <= next_payment:
            raise PauseRefused(_("Choose a date after the next payment (%(date)s).") % {"date": next_payment})
        if until > today + timedelta(days=MAX_PAUSE_DAYS):
            raise PauseRefused(_("A pause can last at most a year."))
        return first_payment_date(day, until)
    return None


def pause_start(sub: Subscription) -> date:
    """The first paused day: the first day not paid for (the paid days are served)."""
    paid_through = _day(sub.PaidThroughDate)
    return paid_through + timedelta(days=1) if paid_through else _day(sub.NextPaymentDate) or date.min


def resume_on(sub: Subscription, today: date) -> date:
    """The first payment after "Resume": the day after the last paid day while that is
    still ahead (the schedule as if never paused), else the first anchor date after
    today; never later than the pause's own end."""
    paid_next = pause_start(sub)
    resume = paid_next if paid_next > today else first_payment_date(int(sub.PaymentDay), today + timedelta(days=1))
    until = _day(sub.PausedUntil)
    return min(resume, until) if until and until > today else resume


def unused_share(amount: int, period_start: date, period_end: date, last_used: date) -> int:
    """The part of a charge for ``period_start``..``period_end`` that pays for the days
    after ``last_used``: their share of it, rounded half up (as ``schedule.prorate``)."""
    period_days = (period_end - period_start).days + 1
    unused = min(period_days, (period_end - max(last_used, period_start - timedelta(days=1))).days)
    return prorate(amount, unused, period_days) if unused > 0 else 0
