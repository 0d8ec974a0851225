"""``revenue_rebuild``'s work (docs/ANALYTICS.md, "Kept figures"): recompute every day's
figures from the audit history (the code the page runs) and keep them as rollups; or check
the kept rollups against a fresh recomputation.

The check has two sources: every kept day is compared with the days recomputed from the
audit history, and today's MRR is also recomputed a second way, from the subscription items
as they stand now (not their events), so a history that lost an event shows up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings

from billing import access
from billing.access import revenue_rollups
from billing.access.revenue_rollups import CohortRow, RollupDay, Scope
from billing.analytics.cohort_table import cohort_table
from billing.analytics.daily import Daily, daily_counts
from billing.analytics.figures import Money
from billing.analytics.filters import ReportFilter, filtered, filtered_money, filtered_usage, kept_scopes
from billing.analytics.history import SubHistory, state_from
from billing.analytics.mrr import Step, state_mrr, steps
from billing.analytics.periods import month_first, month_of
from billing.analytics.reading import (
    account_collections,
    account_histories,
    account_ids,
    all_disputes,
    coupon_terms,
    refunds_of,
    usage_of,
)
from billing.analytics.rollups import (
    ONE_DAY,
    SHARDS,
    DayFigures,
    by_month,
    day_rows,
    differences,
    merge,
    month_rows,
    shard_of,
)


@dataclass(frozen=True)
class Recomputed:
    histories: list[SubHistory]
    steps: list[Step]
    mrr_now: dict[str, int]  # today's MRR from the subscription items as they are (the second source)
    refunds: list[Money]
    disputes: list[Money]
    usage: list[Money] = field(default_factory=list)

    def daily(self, shards: int = SHARDS) -> Daily:
        return daily_counts(self.histories, self.refunds, self.disputes, lambda c: shard_of(c, shards), self.usage)

    def within(self, scope: Scope, today: date) -> Recomputed:
        """The same recomputation for one product's or one interval's subscriptions, as the
        filtered page makes it (``filters``): their refunds and disputes are not split so."""
        view = ReportFilter.of(scope)
        histories = filtered(self.histories, view)
        return Recomputed(histories, steps(histories, today), {}, filtered_money(self.refunds, view),
                          filtered_money(self.disputes, view), filtered_usage(self.usage, self.histories, view))


# Only the rebuild writes a product's or an interval's months: one shard is enough.
SCOPED_SHARDS = 1


def recompute(today: date) -> Recomputed:
    """Every account's histories and refunds (one Query each, as the page reads), the
    disputes (a Query a page of their partition) and, from the same item collections,
    today's MRR from the subscription items themselves."""
    timezone = settings.BILLING_TIMEZONE
    coupons = coupon_terms()
    histories: list[SubHistory] = []
    refunds: list[Money] = []
    usage: list[Money] = []
    now: dict[str, int] = defaultdict(int)
    for account_id, collection in account_collections(account_ids()):
        histories += account_histories(account_id, coupons, timezone, collection)
        refunds += refunds_of(collection, timezone, account_id)
        usage += usage_of(collection, timezone, account_id)
        for sub in collection.subscriptions:
            state = state_from(access.subscription_snapshot(sub), today, coupons)
            if amount := state_mrr(state, today):
                now[state.currency] += amount
    return Recomputed(histories, steps(histories, today), dict(sorted(now.items())), refunds,
                      all_disputes(timezone), usage)


def default_first(moved: list[Step], today: date) -> date:
    """The last day of the month before the first movement: every month from the first
    one then has its opening kept."""
    first = min((s.day for s in moved), default=today)
    return first.replace(day=1) - ONE_DAY


def months_of(first: date, last: date) -> list[str]:
    found: list[str] = []
    day = first.replace(day=1)
    while day <= last:
        found.append(month_of(day))
        day = (day.replace(day=28) + 4 * ONE_DAY).replace(day=1)
    return found


@dataclass(frozen=True)
class Rebuilt:
    first: date
    last: date
    items: int
    shards: int
    cohorts: int = 0
    months: int = 0
    scopes: int = 0  # the products and price intervals kept apart
    scoped_items: int = 0  # their month and cohort items


def rebuild(today: date, *, first: date | None = None, last: date | None = None, shards: int = SHARDS,
            rebuilt_at: str | None = None, written: Callable[[RollupDay], None] | None = None) -> Rebuilt:
    """Recompute and write the days ``first``..``last`` (default: from the month before
    the first movement to today), then every cohort month as of ``last``. Safe to re-run,
    and to kill: the items are the same each time, so a rerun puts the missing ones and
    rewrites the others as they were (a cohort row left from an earlier run closes its
    month on an earlier day: readers do not take it for a later one)."""
    found = recompute(today)
    first = first or default_first(found.steps, today)
    last = min(last or today, today)
    stamp = rebuilt_at or access.utc_now().isoformat()
    daily = found.daily(shards)
    count = revenue_rollups.write_rollups(day_rows(found.steps, first, last, shards, daily),
                                          rebuilt_at=stamp, written=written)
    months = revenue_rollups.write_months(recomputed_months(found, first, last, shards), rebuilt_at=stamp)
    cohorts = revenue_rollups.write_cohorts(cohort_table(found.steps, last), rebuilt_at=stamp)
    # A product's, an interval's or a currency's months are all written each run, from the
    # history's first: one item a month, and a view that first appears today (a new
    # currency) has its earlier months too, whatever ``first``.
    scoped, whole_first = 0, default_first(found.steps, today)
    scopes = kept_scopes(found.histories)
    for scope in scopes:
        view = found.within(scope, today)
        scoped += revenue_rollups.write_months(recomputed_months(view, min(first, whole_first), last, SCOPED_SHARDS),
                                               rebuilt_at=stamp, scope=scope)
        scoped += revenue_rollups.write_cohorts(cohort_table(view.steps, last), rebuilt_at=stamp, scope=scope)
    return Rebuilt(first, last, count, shards, cohorts, months, len(scopes), scoped)


def recomputed_months(found: Recomputed, first: date, last: date, shards: int = SHARDS) -> list[RollupDay]:
    """The rows of every month ``first``..``last`` touches, from its first day (a month's row
    sums all its days, whatever ``--from``) to its last or ``last``."""
    return month_rows(day_rows(found.steps, first.replace(day=1), last, shards, found.daily(shards)))


def kept_months(first_month: str, last_month: str, scope: Scope | None = None) -> dict[str, DayFigures]:
    """The kept months (of ``scope``, or the whole business), shards added up, by
    ``YYYY-MM`` (each a ``DayFigures`` of its close): one Query. A month whose shards close
    on different days (a killed rebuild's) is not complete."""
    return by_month(revenue_rollups.month_rows(first_month, last_month, scope))


def kept_month_closes(first: date, last: date, scope: Scope | None = None) -> dict[date, DayFigures]:
    """The kept months from ``first``'s to ``last``'s, shards added up, each at the day it
    closes (its movements its days' summed, its levels its close's): one Query, 16 items a
    month where ``kept_days`` reads a Query a month of 16 items a day."""
    return {figures.day: figures for figures in kept_months(month_of(first), month_of(last), scope).values()}


def kept_days(first: date, last: date) -> dict[date, DayFigures]:
    """The kept days ``first``..``last``, shards added up: one Query a month."""
    kept = merge(revenue_rollups.rollup_rows(months_of(first, last)))
    return {d: f for d, f in kept.items() if first <= d <= last}


def kept_cohorts_of(first_month: str, last_month: str, scope: Scope | None = None) -> dict[str, CohortRow]:
    """The kept cohort rows of ``first_month``..``last_month`` (of ``scope``, or the whole
    business): one Query."""
    return {row.month: row for row in revenue_rollups.cohort_rows(first_month, last_month, scope)}


@dataclass(frozen=True)
class Checked:
    first: date
    last: date
    days: int
    currencies: list[str]
    differences: list[tuple[date, str, str]]  # (day, currency or "*", what)
    mrr_today_kept: dict[str, int] | None  # None: today is not in the range or not kept
    mrr_today_items: dict[str, int]

    @property
    def agree(self) -> bool:
        return not self.differences and (self.mrr_today_kept is None or self.mrr_today_kept == self.mrr_today_items)


def check(today: date, *, first: date | None = None, last: date | None = None) -> Checked:
    found = recompute(today)
    first = first or default_first(found.steps, today)
    last = min(last or today, today)
    recomputed = merge(day_rows(found.steps, first, last, SHARDS, found.daily()))
    kept = kept_days(first, last)
    today_kept = kept[today].mrr if last == today and today in kept and kept[today].complete else None
    currencies = sorted({c for d in recomputed.values() for c in d.figures})
    found_differences = (differences(kept, recomputed) + month_differences(recomputed_months(found, first, last))
                         + cohort_differences(cohort_table(found.steps, last)))
    # a view's months are kept from the history's first (``rebuild``): none before it to compare
    scoped_first = max(first, default_first(found.steps, today))
    for scope in kept_scopes(found.histories):
        view = found.within(scope, today)
        found_differences += month_differences(recomputed_months(view, scoped_first, last, SCOPED_SHARDS), scope)
        found_differences += cohort_differences(cohort_table(view.steps, last), scope)
    return Checked(first, last, len(recomputed), currencies, found_differences, today_kept, found.mrr_now)


def _named(what: str, scope: Scope | None) -> str:
    return what if scope is None else f"{what} {scope}"


def month_differences(recomputed: list[RollupDay], scope: Scope | None = None) -> list[tuple[date, str, str]]:
    """Each kept month (of ``scope``, or the whole business) whose row is not the recomputed
    one (one Query): (its close, ``month``, the scope and the currency or ``*``, what
    differs)."""
    if not recomputed:
        return []
    first, last = recomputed[0].day.isoformat()[:7], recomputed[-1].day.isoformat()[:7]
    kept = merge(revenue_rollups.month_rows(first, last, scope))
    return [(day, f"{_named('month', scope)} {currency}", what)
            for day, currency, what in differences(kept, merge(recomputed))]


def cohort_differences(recomputed: list[CohortRow], scope: Scope | None = None) -> list[tuple[date, str, str]]:
    """Each cohort month (of ``scope``, or the whole business) whose kept row is not the
    recomputed one (one Query of the cohorts' partition): (its first day, ``cohort`` and
    the scope, what differs)."""
    if not recomputed:
        return []
    kept = {row.month: row for row in revenue_rollups.cohort_rows(recomputed[0].month, recomputed[-1].month, scope)}
    found = []
    for row in recomputed:
        mine = kept.get(row.month)
        if mine is None:
            found.append((month_first(row.month), _named("cohort", scope), f"{row.month} not kept"))
            continue
        wrong = [f"{name} kept {getattr(mine, name)} recomputed {getattr(row, name)}"
                 for name in ("through", "members", "retained", "mrr") if getattr(mine, name) != getattr(row, name)]
        if wrong:
            found.append((month_first(row.month), _named("cohort", scope), f"{row.month} " + ", ".join(wrong)))
    return found
