"""The month's other figures (docs/ANALYTICS.md, "More figures"): ARR, paying customers,
ARPA, net and gross revenue retention, trial-to-paid conversion, failed-payment recovery,
refunds and disputes, usage revenue, trials started. Pure: no I/O (the refunds and disputes are read by ``reading``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from billing.analytics.history import SubHistory
from billing.analytics.mrr import Movements, Step, levels_at, state_mrr, state_on
from billing.analytics.retention import percent
from billing.models import SubscriptionStatus

MONTHS_A_YEAR = 12


@dataclass(frozen=True)
class Money:
    """Something that happened to money on a day (a refund, a dispute opened)."""

    day: date
    currency: str
    amount: int  # minor units
    customer: str = ""  # the account, when known (the kept figures' shard)
    subscription: str = ""  # the subscription's key, when known (usage: the filters' product)


@dataclass(frozen=True)
class Ratio:
    """``part`` of ``whole``, and the percentage (None: nothing to divide)."""

    part: int
    whole: int

    @property
    def rate(self) -> Decimal | None:
        return percent(self.part, self.whole)


@dataclass(frozen=True)
class CurrencyFigures:
    currency: str
    mrr: int
    arr: int  # MRR x 12
    paying: int  # customers with MRR above 0 in this currency at the close
    arpa: int | None  # MRR / paying, half up to the minor unit; None with no paying customer
    net_retention: Decimal | None  # (opening - churn - contraction + expansion + reactivation) / opening
    gross_retention: Decimal | None  # (opening - churn - contraction) / opening
    refunds: int  # how many, and how much, in the month
    refunded: int
    disputes: int
    disputed: int
    usage: int = 0  # usage revenue: the usage billed by the charges paid in the month, net of tax


@dataclass(frozen=True)
class Figures:
    paying_customers: int  # with MRR above 0 in any currency at the close
    trials: Ratio  # trials that ended in the month, and those that went on paid
    recovery: Ratio  # past-due episodes begun in the month, and those paid again by the close
    by_currency: tuple[CurrencyFigures, ...]
    trials_started: int = 0  # subscriptions whose free trial started in the month

    @property
    def usage(self) -> dict[str, int]:
        """The month's usage revenue per currency (those with some)."""
        return {f.currency: f.usage for f in self.by_currency if f.usage}


def arpa(mrr: int, paying: int) -> int | None:
    if not paying:
        return None
    return int((Decimal(mrr) / paying).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def retention(m: Movements) -> tuple[Decimal | None, Decimal | None]:
    """Net and gross revenue retention of a month, in percent: the complements of the net
    and gross revenue churn (docs/ANALYTICS.md), so both add up to 100 with them."""
    kept = m.opening - m.churn - m.contraction
    return percent(kept + m.expansion + m.reactivation, m.opening), percent(kept, m.opening)


def paying_by_currency(steps: Sequence[Step], day: date) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for (_, currency), amount in levels_at(steps, day).items():
        if amount:
            counts[currency] += 1
    return dict(counts)


def trial_started(history: SubHistory) -> date | None:
    """The day the subscription's free trial started: the start of its first state in a
    trial (a ``TrialEnd`` not before that day); None without one. Once a subscription: an
    extended trial is the same trial."""
    return next((s.start for s in history.states if s.trial_end and s.trial_end >= s.start), None)


def trials_started(histories: Sequence[SubHistory], first: date, close: date) -> int:
    """Subscriptions whose free trial started in ``first``..``close`` (``trial_started``)."""
    return sum(first <= day <= close for day in map(trial_started, histories) if day is not None)


def trial_conversion(histories: Sequence[SubHistory], first: date, close: date) -> Ratio:
    """Trials whose last free day fell in ``first``..``close``, and those counted in MRR
    at the close of that day (still in force and paying: not cancelled during the trial).
    A trial extended to a later day ends on the later day."""
    ended = converted = 0
    for history in histories:
        for end in sorted({s.trial_end for s in history.states if s.trial_end and first <= s.trial_end <= close}):
            state = state_on(history, end)
            if state is None or state.trial_end != end:
                continue
            ended += 1
            converted += state_mrr(state, end) > 0
    return Ratio(converted, ended)


def payment_recovery(histories: Sequence[SubHistory], first: date, close: date) -> Ratio:
    """Past-due episodes (a subscription turning ``past_due``) begun in ``first``..``close``,
    and those whose next other status by the close is ``active`` (paid again); one still
    past due, or cancelled by dunning, is not recovered."""
    began = recovered = 0
    for history in histories:
        states = list(history.states)
        for n, state in enumerate(states):
            if state.status != SubscriptionStatus.PAST_DUE or not first <= state.start <= close:
                continue
            if n and states[n - 1].status == SubscriptionStatus.PAST_DUE:
                continue
            began += 1
            after = next((s for s in states[n + 1:] if s.status != SubscriptionStatus.PAST_DUE and s.start <= close),
                         None)
            recovered += after is not None and after.status == SubscriptionStatus.ACTIVE
    return Ratio(recovered, began)


def _in_month(items: Sequence[Money], first: date, close: date) -> dict[str, tuple[int, int]]:
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        if first <= item.day <= close:
            sums[item.currency][0] += 1
            sums[item.currency][1] += item.amount
    return {c: (n, a) for c, (n, a) in sums.items()}


def currency_rows(mrr: dict[str, int], moved: dict[str, Movements], paying: dict[str, int],
                  refunded: dict[str, tuple[int, int]], disputed: dict[str, tuple[int, int]],
                  usage: dict[str, int] | None = None) -> tuple[CurrencyFigures, ...]:
    """Each currency's row: those with MRR, movements, a refund, a dispute or usage billed."""
    usage = usage or {}
    rows = []
    for currency in sorted(set(mrr) | set(moved) | set(refunded) | set(disputed) | set(usage)):
        amount = mrr.get(currency, 0)
        net, gross = retention(moved[currency]) if currency in moved else (None, None)
        rows.append(CurrencyFigures(
            currency, amount, amount * MONTHS_A_YEAR, paying.get(currency, 0), arpa(amount, paying.get(currency, 0)),
            net, gross, *refunded.get(currency, (0, 0)), *disputed.get(currency, (0, 0)), usage.get(currency, 0)))
    return tuple(rows)


def month_figures(*, histories: Sequence[SubHistory], steps: Sequence[Step], mrr: dict[str, int],
                  moved: dict[str, Movements], paying_customers: int, first: date, close: date,
                  refunds: Sequence[Money] = (), disputes: Sequence[Money] = (),
                  usage: Sequence[Money] = ()) -> Figures:
    rows = currency_rows(mrr, moved, paying_by_currency(steps, close), _in_month(refunds, first, close),
                         _in_month(disputes, first, close),
                         # a currency's usage of nothing is none (as the kept items keep it)
                         {c: amount for c, (_, amount) in _in_month(usage, first, close).items() if amount})
    return Figures(paying_customers, trial_conversion(histories, first, close),
                   payment_recovery(histories, first, close), rows, trials_started(histories, first, close))
