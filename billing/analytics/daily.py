"""The page's figures that are not MRR steps, per day and shard of the customers, for the
kept rollups (docs/ANALYTICS.md, "Kept figures"): the subscriptions not counted at a day's
close (a trial, a pause), the trials ending and converting, the past-due episodes begun,
recovered and lost, the trials started, the refunds and disputes, the usage billed. Each is kept so that a month's figure is
the sum of its days' (``figures.trial_conversion``, ``figures.payment_recovery``), or a
day's own level (``mrr.excluded_at``), to the unit. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from billing.analytics.figures import Money, trial_started
from billing.analytics.history import SubHistory
from billing.analytics.mrr import Excluded, change_days, excluded, in_force, state_mrr, state_on
from billing.models import SubscriptionStatus

Counter = dict[str, int]
MONEY_NAMES = {"refund": ("refunds", "refunded"), "dispute": ("disputes", "disputed")}
# ``usage``: the usage billed by the charges paid on the day, net of tax (kept apart from
# the refunds' and disputes' map: billing/access/revenue_rollups.py)
MONEY = ("refunds", "refunded", "disputes", "disputed", "usage")


@dataclass
class Daily:
    """Per day and shard: ``levels`` are changes of a running count (``trial``, ``paused``:
    +1 the day a subscription starts counting 0, -1 the day it stops); ``events`` are the
    day's own counts; ``money`` the day's refunds and disputes per currency."""

    levels: dict[date, dict[int, Counter]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(Counter)))
    events: dict[date, dict[int, Counter]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(Counter)))
    money: dict[date, dict[int, dict[str, Counter]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(Counter))))

    def add(self, into: dict[date, dict[int, Counter]], day: date, shard: int, name: str, n: int = 1) -> None:
        row = into[day][shard]
        row[name] = row.get(name, 0) + n


def _not_counted(history: SubHistory) -> list[tuple[date, Excluded | None]]:
    """Why the subscription counts 0 from each of its change days on (None: it counts, or
    is not in force). Between two change days nothing of ``excluded_at`` can change: the
    days a trial, a pause or a paid period ends are change days, and the days before them."""
    found: list[tuple[date, Excluded | None]] = []
    for day in sorted(change_days(history)):
        state = state_on(history, day)
        reason = excluded(state, day) if state is not None and in_force(state, day) else None
        if not found or found[-1][1] != reason:
            found.append((day, reason))
    return found


def _trials(history: SubHistory, shard: int, daily: Daily) -> None:
    if (started := trial_started(history)) is not None:
        daily.add(daily.events, started, shard, "trials_started")
    # as figures.trial_conversion: each distinct last free day, if the state on it still ends then
    for end in sorted({s.trial_end for s in history.states if s.trial_end}):
        state = state_on(history, end)
        if state is None or state.trial_end != end:
            continue
        daily.add(daily.events, end, shard, "trials_ended")
        if state_mrr(state, end) > 0:
            daily.add(daily.events, end, shard, "trials_converted")


def _past_due(history: SubHistory, shard: int, daily: Daily) -> None:
    # as figures.payment_recovery: an episode recovered by a month's close began in that
    # month and paid again on a day of it, so it is counted on the day it paid, when both
    # fall in one month (a later month's recovery is not its month's)
    states = list(history.states)
    for n, state in enumerate(states):
        if state.status != SubscriptionStatus.PAST_DUE or (n and states[n - 1].status == SubscriptionStatus.PAST_DUE):
            continue
        daily.add(daily.events, state.start, shard, "past_due_began")
        after = next((s for s in states[n + 1:] if s.status != SubscriptionStatus.PAST_DUE), None)
        if after is None or (after.start.year, after.start.month) != (state.start.year, state.start.month):
            continue
        outcome = "past_due_recovered" if after.status == SubscriptionStatus.ACTIVE else "past_due_lost"
        daily.add(daily.events, after.start, shard, outcome)


def daily_counts(histories: Sequence[SubHistory], refunds: Sequence[Money], disputes: Sequence[Money],
                 shard_of: Callable[[str], int], usage: Sequence[Money] = ()) -> Daily:
    daily = Daily()
    for history in histories:
        shard = shard_of(history.customer)
        previous: Excluded | None = None
        for day, reason in _not_counted(history):
            if previous is not None:
                daily.add(daily.levels, day, shard, previous.value, -1)
            if reason is not None:
                daily.add(daily.levels, day, shard, reason.value)
            previous = reason
        _trials(history, shard, daily)
        _past_due(history, shard, daily)
    for kind, items in (("refund", refunds), ("dispute", disputes)):
        for item in items:
            row = daily.money[item.day][shard_of(item.customer)][item.currency]
            count, amount = MONEY_NAMES[kind]
            row[count] = row.get(count, 0) + 1
            row[amount] = row.get(amount, 0) + item.amount
    for item in usage:
        row = daily.money[item.day][shard_of(item.customer)][item.currency]
        row["usage"] = row.get("usage", 0) + item.amount
    return daily
