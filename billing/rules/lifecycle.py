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
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from django.utils.translation import gettext_lazy as _

from billing.exceptions import PauseRefused
from billing.models import INCOMPLETE_HOURS, Subscription, SubscriptionStatus
from billing.rules.schedule import (
    Cadence,
    cadence_of,
    first_payment_date,
    new_cadence,
    next_payment_date,
    prorate,
)

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


# Cancel reasons of a subscription whose first payment failed: it never started.
NEVER_STARTED_REASONS = ("first_payment_declined", "first_payment_failed", "first_payment_not_confirmed",
                         SubscriptionStatus.INCOMPLETE_EXPIRED.value)

# What each kind is called, the same on every page (``{% sub_status %}``,
# templates/_sub_status.html, words the dates in).
KINDS = ("active", "trialing", "cancelling", "paused", "past_due", "action_required", "incomplete",
         "not_started", "ended")


@dataclass(frozen=True)
class SubState:
    """What the customer and staff see, one of ``KINDS``: ``until`` is the last day of
    service (cancelling), the day collection resumes (paused, None while the pause is
    open), the last free day (trialing); ``since`` the first paused day; ``paid_through``
    the last day paid for; ``expires`` when an incomplete first payment expires;
    ``expired``: a not-started one whose first payment was never confirmed."""

    kind: str
    until: date | None = None
    since: date | None = None
    # The last free day of a free trial still running (any kind but ended).
    trial_until: date | None = None
    paid_through: date | None = None
    expires: datetime | None = None
    expired: bool = False

    @property
    def live(self) -> bool:
        """Billed and counted: what the dashboard lists and totals (a cancel at period end
        is listed with them, but is not counted: nothing more is charged)."""
        return self.kind in ("active", "trialing", "paused", "past_due", "action_required")

    @property
    def listed(self) -> bool:
        """Listed with the live subscriptions (the ones still served, or waiting on the customer)."""
        return self.live or self.kind in ("cancelling", "incomplete")

    @property
    def running(self) -> bool:
        """Served and charged as usual: it may be paused or switched."""
        return self.kind in ("active", "trialing")


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def incomplete_expires(sub: Subscription) -> datetime | None:
    """When an incomplete subscription's first payment stops waiting for the customer
    (``INCOMPLETE_HOURS`` after it was made, as Stripe Billing's 23 hours)."""
    if not sub.CreatedDate:
        return None
    created = datetime.fromisoformat(sub.CreatedDate)
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created + timedelta(hours=INCOMPLETE_HOURS)


def is_expired_incomplete(sub: Subscription, now: datetime | None = None) -> bool:
    """Expired, or incomplete past its deadline (the run expires it later: pages show it
    expired at once)."""
    if sub.Status == SubscriptionStatus.INCOMPLETE_EXPIRED:
        return True
    if sub.Status != SubscriptionStatus.INCOMPLETE:
        return False
    expires = incomplete_expires(sub)
    return expires is not None and (now or datetime.now(tz=UTC)) >= expires


def never_started(sub: Subscription, now: datetime | None = None) -> bool:
    """Its first payment failed, was refused, or was never confirmed: nothing was served."""
    if sub.Status == SubscriptionStatus.CANCELLED:
        return sub.CancelReason in NEVER_STARTED_REASONS
    return is_expired_incomplete(sub, now)


def state_of(sub: Subscription, today: date, now: datetime | None = None) -> SubState:
    """The one state of ``sub`` on ``today`` (``now``: the time, for an incomplete
    subscription's deadline; default the clock's)."""
    state = _state_of(sub, today, now)
    trial_end = _day(sub.TrialEnd)
    if trial_end and trial_end >= today and state.kind not in ("ended", "not_started", "incomplete"):
        state = replace(state, trial_until=trial_end)
    paid_through = _day(sub.PaidThroughDate)
    if state.kind not in ("not_started", "incomplete", "trialing") and not (trial_end and paid_through == trial_end):
        state = replace(state, paid_through=paid_through)
    return state


def _state_of(sub: Subscription, today: date, now: datetime | None) -> SubState:
    paid_through = _day(sub.PaidThroughDate)
    if sub.Status in (SubscriptionStatus.INCOMPLETE, SubscriptionStatus.INCOMPLETE_EXPIRED):
        if is_expired_incomplete(sub, now):
            return SubState("not_started", expired=True)
        return SubState("incomplete", expires=incomplete_expires(sub))
    if sub.Status == SubscriptionStatus.CANCELLED:
        if never_started(sub):
            return SubState("not_started")
        if sub.CancelMode == CancelMode.PERIOD_END and paid_through and paid_through >= today:
            return SubState("cancelling", until=paid_through)
        return SubState("ended")
    if sub.Status == SubscriptionStatus.PAST_DUE:
        return SubState("action_required" if sub.PaymentDetails and sub.PaymentDetails.AwaitingCharge else "past_due")
    if sub.PausedFrom and not sub.NextPaymentDate:
        return SubState("paused", since=_day(sub.PausedFrom))
    until = _day(sub.PausedUntil)
    if until and until > today:
        return SubState("paused", until=until, since=_day(sub.PausedFrom))
    trial_end = _day(sub.TrialEnd)
    if trial_end and trial_end >= today:
        return SubState("trialing", until=trial_end)
    return SubState("active")


def can_keep(sub: Subscription, today: date) -> bool:
    """A cancel at period end may be undone until the last paid day is over."""
    return state_of(sub, today).kind == "cancelling"


def usage_billed_on(sub: Subscription) -> date | None:
    """The day a cancel at period end charges its last period's usage: a metered price's
    usage is billed in arrears, the day after the last day served (the payment run's
    ``bill_ended_periods``); None without a metered price or a paid-through day. The
    pages and e-mails that promise "nothing more is charged" say this instead."""
    if not sub.MeteredPriceId or not sub.PaidThroughDate:
        return None
    return date.fromisoformat(sub.PaidThroughDate) + timedelta(days=1)


def last_usage_billed_on(sub: Subscription, today: date) -> date | None:
    """A cancelled subscription still running to its period's end (the customer's cancel at
    period end, or staff's) with a metered price: the day its last usage charge is made,
    after ``today``; None for any other (a cancel now billed its usage at once)."""
    billed_on = usage_billed_on(sub)
    if billed_on is None or billed_on <= today or sub.Status != SubscriptionStatus.CANCELLED:
        return None
    return billed_on if sub.CancelMode in (CancelMode.PERIOD_END, None) else None


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
    day = cadence_of(sub)
    if payments is not None:
        if not 1 <= payments <= MAX_PAUSE_PAYMENTS:
            raise PauseRefused(_("Skip between 1 and %(most)d payments.") % {"most": MAX_PAUSE_PAYMENTS})
        resume = next_payment
        for _n in range(payments):
            resume = next_payment_date(day, resume)
        # Twelve months are a year; twelve years are not (a yearly or every-N-months cadence).
        if not day.is_monthly and (resume - next_payment).days > MAX_PAUSE_DAYS:
            raise PauseRefused(_("A pause can last at most a year."))
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


# "Resume" after the paid days are over serves the days up to the next payment unpaid:
# at most this many after today, a monthly subscription's longest wait (31 July to 31
# August). A cadence whose next date is further (a yearly's next anniversary, most of a
# year away) is anchored anew instead.
MOST_UNPAID_RESUME_DAYS = 31


def resumed_cadence(sub: Subscription, today: date) -> Cadence | None:
    """The cadence a "Resume" on ``today`` anchors anew, or None when it keeps its own.

    Kept while paid days are left (due the day after them, as if never paused), and
    while its next date (or the pause's own end) is at most ``MOST_UNPAID_RESUME_DAYS``
    after today: always for a monthly one. Else anchored on tomorrow (today's run may be
    over), Stripe's resume with ``billing_cycle_anchor=now``: a yearly resumed in March
    renews each March from then on, a full period charged tomorrow, nothing prorated;
    the paused days are never charged, and a month's at most served unpaid."""
    if pause_start(sub) > today:
        return None
    cadence = cadence_of(sub)
    tomorrow = today + timedelta(days=1)
    due = first_payment_date(cadence, tomorrow)
    until = _day(sub.PausedUntil)
    if until and until > today:
        due = min(due, until)
    if (due - today).days <= MOST_UNPAID_RESUME_DAYS:
        return None
    return new_cadence(tomorrow.day, tomorrow, cadence.interval, cadence.count)


def resume_on(sub: Subscription, today: date) -> date:
    """The first payment after "Resume": the day after the last paid day while that is
    still ahead (the schedule as if never paused), else the first anchor date after
    today; never later than the pause's own end. A cadence ``resumed_cadence`` anchors
    anew is due tomorrow, its new anchor."""
    anew = resumed_cadence(sub, today)
    if anew is not None:
        assert anew.anchor is not None  # never the plain monthly cadence (its wait is short)
        return anew.anchor
    paid_next = pause_start(sub)
    resume = paid_next if paid_next > today else first_payment_date(cadence_of(sub), today + timedelta(days=1))
    until = _day(sub.PausedUntil)
    return min(resume, until) if until and until > today else resume


def unused_share(amount: int, period_start: date, period_end: date, last_used: date) -> int:
    """The part of a charge for ``period_start``..``period_end`` that pays for the days
    after ``last_used``: their share of it, rounded half up (as ``schedule.prorate``)."""
    period_days = (period_end - period_start).days + 1
    unused = min(period_days, (period_end - max(last_used, period_start - timedelta(days=1))).days)
    return prorate(amount, unused, period_days) if unused > 0 else 0
