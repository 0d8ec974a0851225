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
from dataclasses import dataclass
from datetime import date

from django.conf import settings

from billing import access
from billing.access import revenue_rollups
from billing.access.revenue_rollups import RollupDay
from billing.analytics.history import SubHistory, state_from
from billing.analytics.mrr import Step, state_mrr, steps
from billing.analytics.periods import month_of
from billing.analytics.reading import account_histories, account_ids, coupon_terms
from billing.analytics.rollups import ONE_DAY, SHARDS, DayFigures, day_rows, differences, merge


@dataclass(frozen=True)
class Recomputed:
    histories: list[SubHistory]
    steps: list[Step]
    mrr_now: dict[str, int]  # today's MRR from the subscription items as they are (the second source)


def recompute(today: date) -> Recomputed:
    """Every account's histories (one Query each, as the page reads) and, from the same
    item collections, today's MRR from the subscription items themselves."""
    timezone = settings.BILLING_TIMEZONE
    coupons = coupon_terms()
    histories: list[SubHistory] = []
    now: dict[str, int] = defaultdict(int)
    for account_id in account_ids():
        collection = access.get_account_collection(account_id)
        histories += account_histories(account_id, coupons, timezone, collection)
        for sub in collection.subscriptions:
            state = state_from(access.subscription_snapshot(sub), today, coupons)
            if amount := state_mrr(state, today):
                now[state.currency] += amount
    return Recomputed(histories, steps(histories, today), dict(sorted(now.items())))


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


def rebuild(today: date, *, first: date | None = None, last: date | None = None, shards: int = SHARDS,
            rebuilt_at: str | None = None, written: Callable[[RollupDay], None] | None = None) -> Rebuilt:
    """Recompute and write the days ``first``..``last`` (default: from the month before
    the first movement to today). Safe to re-run, and to kill: the items are the same
    each time, so a rerun puts the missing ones and rewrites the others as they were."""
    found = recompute(today)
    first = first or default_first(found.steps, today)
    last = min(last or today, today)
    count = revenue_rollups.write_rollups(day_rows(found.steps, first, last, shards),
                                          rebuilt_at=rebuilt_at or access.utc_now().isoformat(), written=written)
    return Rebuilt(first, last, count, shards)


def kept_days(first: date, last: date) -> dict[date, DayFigures]:
    """The kept days ``first``..``last``, shards added up: one Query a month."""
    kept = merge(revenue_rollups.rollup_rows(months_of(first, last)))
    return {d: f for d, f in kept.items() if first <= d <= last}


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
    recomputed = merge(day_rows(found.steps, first, last))
    kept = kept_days(first, last)
    today_kept = kept[today].mrr if last == today and today in kept and kept[today].complete else None
    currencies = sorted({c for d in recomputed.values() for c in d.figures})
    return Checked(first, last, len(recomputed), currencies, differences(kept, recomputed), today_kept,
                   found.mrr_now)
