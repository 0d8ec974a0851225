"""MRR at the close of a day, and its movements (docs/ANALYTICS.md). Pure: no I/O.

MRR at the close of day *d* is what the subscriptions in force at that moment bill per
month from the next day on, per currency (currencies are never added together): a
subscription counts at its monthly amount less a coupon for ever; not while in its free
trial or paused; not once cancelled and paid through *d* or earlier (a cancel at period
end counts until its last paid day closes); never while ``incomplete``.

Movements are the changes of each customer's MRR in one currency, day by day: from 0 to
more is *new* (the first time) or *reactivation*; from more to 0 *churn*; up *expansion*;
down *contraction*. Summed over a month, opening + new + expansion + reactivation −
contraction − churn = closing, exactly (each step moves the total by its own amount).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

from billing.analytics.history import SubHistory, SubState
from billing.models import SubscriptionStatus

NEVER_STARTED = (SubscriptionStatus.INCOMPLETE, SubscriptionStatus.INCOMPLETE_EXPIRED)
ONE_DAY = timedelta(days=1)


class Excluded(StrEnum):
    """Why a subscription in force counts 0 on a day (said on the page)."""

    TRIAL = "trial"
    PAUSED = "paused"


def state_on(history: SubHistory, day: date) -> SubState | None:
    found = None
    for state in history.states:
        if state.start > day:
            break
        found = state
    return found


def excluded(state: SubState, day: date) -> Excluded | None:
    """Whether a subscription still in force counts 0 at the close of ``day``: its next
    day is a free trial's, or a paused one."""
    tomorrow = day + ONE_DAY
    if state.trial_end and tomorrow <= state.trial_end:
        return Excluded.TRIAL
    if state.paused_from and state.paused_from <= tomorrow and (state.paused_until is None
                                                                 or tomorrow < state.paused_until):
        return Excluded.PAUSED
    return None


def in_force(state: SubState, day: date) -> bool:
    """Whether the subscription still serves the customer after ``day`` (within the
    report's filter: a state outside it is not)."""
    if state.outside or state.status in NEVER_STARTED:
        return False
    if state.status == SubscriptionStatus.CANCELLED:
        return state.paid_through is not None and state.paid_through > day
    return True


def state_mrr(state: SubState, day: date) -> int:
    if not in_force(state, day) or excluded(state, day):
        return 0
    return max(0, state.amount - state.recurring_discount)


def mrr_at(histories: Iterable[SubHistory], day: date) -> dict[str, int]:
    """MRR per currency at the close of ``day``, straight from the states (the check of
    the movements: nothing here reads them)."""
    totals: dict[str, int] = defaultdict(int)
    for history in histories:
        state = state_on(history, day)
        if state is not None and (amount := state_mrr(state, day)):
            totals[state.currency] += amount
    return dict(sorted(totals.items()))


def excluded_at(histories: Iterable[SubHistory], day: date) -> dict[Excluded, int]:
    """How many subscriptions in force count 0 at the close of ``day``, and why."""
    counts = {reason: 0 for reason in Excluded}
    for history in histories:
        state = state_on(history, day)
        if state is not None and in_force(state, day) and (reason := excluded(state, day)):
            counts[reason] += 1
    return counts


# --- movements ------------------------------------------------------------------------------


class Kind(StrEnum):
    NEW = "new"
    EXPANSION = "expansion"
    CONTRACTION = "contraction"
    CHURN = "churn"
    REACTIVATION = "reactivation"


@dataclass(frozen=True)
class Step:
    """One customer's MRR in one currency moving from ``before`` to ``after`` on ``day``."""

    customer: str
    currency: str
    day: date
    before: int
    after: int
    kind: Kind

    @property
    def delta(self) -> int:
        return self.after - self.before


def kind_of(before: int, after: int, *, paid_before: bool) -> Kind:
    if before == 0:
        return Kind.REACTIVATION if paid_before else Kind.NEW
    if after == 0:
        return Kind.CHURN
    return Kind.EXPANSION if after > before else Kind.CONTRACTION


def change_days(history: SubHistory) -> set[date]:
    """The days a subscription's MRR may change on: a state's start, and the days its
    trial, pause or paid service ends (between them, its MRR is constant)."""
    days = set()
    for state in history.states:
        days.add(state.start)
        for edge in (state.paid_through, state.paused_from, state.paused_until, state.trial_end):
            if edge is not None:
                days.update((edge - ONE_DAY, edge))
    return days


def steps(histories: Iterable[SubHistory], until: date) -> list[Step]:
    """Every customer's MRR moves, per currency, up to the close of ``until``, by day."""
    by_customer: dict[str, list[SubHistory]] = defaultdict(list)
    for history in histories:
        by_customer[history.customer].append(history)
    found: list[Step] = []
    for customer in sorted(by_customer):
        subs = by_customer[customer]
        days = sorted(d for d in set().union(*map(change_days, subs)) if d <= until)
        level: dict[str, int] = defaultdict(int)
        paid: set[str] = set()
        for day in days:
            now = mrr_at(subs, day)
            for currency in sorted(set(level) | set(now)):
                before, after = level[currency], now.get(currency, 0)
                if before != after:
                    found.append(Step(customer, currency, day, before, after,
                                      kind_of(before, after, paid_before=currency in paid)))
                    level[currency] = after
                if after:
                    paid.add(currency)
    found.sort(key=lambda s: (s.day, s.customer, s.currency))
    return found


@dataclass(frozen=True)
class Movements:
    """One currency's MRR over a period: opening at the close of the day before it,
    closing at the close of its last day; the movements as positive amounts."""

    currency: str
    opening: int = 0
    new: int = 0
    expansion: int = 0
    contraction: int = 0
    churn: int = 0
    reactivation: int = 0
    closing: int = 0

    @property
    def net(self) -> int:
        return self.new + self.expansion + self.reactivation - self.contraction - self.churn


def movements(all_steps: Sequence[Step], first: date, last: date) -> dict[str, Movements]:
    """Each currency's movements over ``first``..``last`` (both included)."""
    sums: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for step in all_steps:
        if step.day > last:
            continue
        row = sums[step.currency]
        if step.day < first:
            row["opening"] += step.delta
            continue
        row[step.kind.value] += abs(step.delta)
    result = {}
    for currency in sorted(sums):
        row = sums[currency]
        opening = row["opening"]
        result[currency] = Movements(
            currency, opening, row["new"], row["expansion"], row["contraction"], row["churn"], row["reactivation"],
            opening + row["new"] + row["expansion"] + row["reactivation"] - row["contraction"] - row["churn"])
    return result


def levels_at(all_steps: Sequence[Step], day: date) -> dict[tuple[str, str], int]:
    """Each (customer, currency)'s MRR at the close of ``day`` (the steps in order of day)."""
    level: dict[tuple[str, str], int] = {}
    for step in all_steps:
        if step.day > day:
            break
        level[(step.customer, step.currency)] = step.after
    return level


def paying_customers(all_steps: Sequence[Step], day: date) -> set[str]:
    """The customers with MRR above 0 (in any currency) at the close of ``day``."""
    return {customer for (customer, _), amount in levels_at(all_steps, day).items() if amount}
