"""``revenue_rebuild``'s work (docs/ANALYTICS.md, "Kept figures"): recompute every day's
figures from the audit history (the code the page runs) and keep them as rollups; or check
the kept rollups against a fresh recomputation.

The check has two sources: every kept day is compared with the days recomputed from the
audit history, and today's MRR is also recomputed a second way, from the subscription items
as they stand now (not their events), so a history that lost an event shows up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cached_property

from django.conf import settings

from billing import access
from billing.access import revenue_rollups
from billing.access.revenue_rollups import CohortRow, RollupDay, Scope
from billing.analytics.cohort_table import cohort_table, merged
from billing.analytics.daily import Daily, daily_counts
from billing.analytics.figures import Money
from billing.analytics.filters import (
    ReportFilter,
    filtered,
    filtered_money,
    filtered_usage,
    histories_by_scope,
    kept_scopes,
)
from billing.analytics.history import SubHistory, state_from
from billing.analytics.mrr import Step, state_mrr, steps
from billing.analytics.periods import month_first, month_of
from billing.analytics.reading import (
    account_collections,
    account_histories,
    account_ids,
    all_disputes,
    catalog_scopes,
    coupon_terms,
    refunds_of,
    usage_of,
)
from billing.analytics.rollups import (
    ONE_DAY,
    SHARDS,
    DayFigures,
    Part,
    by_month,
    day_rows,
    differences,
    merge,
    month_rows,
    own,
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
        """The same recomputation for one view's subscriptions (a product, a price interval, a
        currency, or some of them together), as the filtered page makes it (``filters``):
        refunds and disputes are split by currency alone."""
        view = ReportFilter.of(scope)
        ever = self.by_scope.get(scope, [])
        histories = filtered(ever, view)
        usage = [item for history in ever for item in self.usage_by_subscription.get(history.key, ())]
        return Recomputed(histories, steps(histories, today), {}, filtered_money(self.refunds, view),
                          filtered_money(self.disputes, view), filtered_usage(usage, ever, view))

    @cached_property
    def by_scope(self) -> dict[Scope, list[SubHistory]]:
        """The histories ever within each view, made once for all the views."""
        return histories_by_scope(self.histories)

    @cached_property
    def usage_by_subscription(self) -> dict[str, list[Money]]:
        found: dict[str, list[Money]] = defaultdict(list)
        for item in self.usage:
            found[item.subscription].append(item)
        return found


def rebuild_parts() -> int:
    """How many processes a rebuild is split into (``REVENUE_REBUILD_PARTS``, 1 by default):
    a view's months and the cohorts are kept in as many shards, one a part (only the rebuild
    writes them); the days and the whole business's months always in ``SHARDS``."""
    return int(settings.REVENUE_REBUILD_PARTS)


def recompute(today: date, part: Part | None = None) -> Recomputed:
    """Every account's histories and refunds (one Query each, as the page reads), the
    disputes (a Query a page of their partition) and, from the same item collections,
    today's MRR from the subscription items themselves; of ``part``'s accounts alone when
    one is given (every account is still listed, but only the part's are read)."""
    timezone = settings.BILLING_TIMEZONE
    coupons = coupon_terms()
    histories: list[SubHistory] = []
    refunds: list[Money] = []
    usage: list[Money] = []
    now: dict[str, int] = defaultdict(int)
    ids = account_ids() if part is None else (a for a in account_ids() if part.holds(a))
    disputes = all_disputes(timezone)
    for account_id, collection in account_collections(ids):
        histories += account_histories(account_id, coupons, timezone, collection)
        refunds += refunds_of(collection, timezone, account_id)
        usage += usage_of(collection, timezone, account_id)
        for sub in collection.subscriptions:
            state = state_from(access.subscription_snapshot(sub), today, coupons)
            if amount := state_mrr(state, today):
                now[state.currency] += amount
    return Recomputed(histories, steps(histories, today), dict(sorted(now.items())), refunds,
                      [d for d in disputes if part is None or part.holds(d.customer)], usage)


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
    scoped_days: int = 0  # their days' items (one a month ``first``..``last`` touches and part)


def rebuild(today: date, *, first: date | None = None, last: date | None = None, shards: int = SHARDS,
            rebuilt_at: str | None = None, written: Callable[[RollupDay], None] | None = None,
            part: Part | None = None) -> Rebuilt:
    """Recompute and write the days ``first``..``last`` (default: from the month before
    the first movement to today), then every cohort month as of ``last``; of ``part``'s
    customers alone when one is given (a rebuild split over processes: each writes its own
    shards, and ``first`` must be the same in every part). Safe to re-run, and to kill: the
    items are the same each time, so a rerun puts the missing ones and rewrites the others
    as they were (a cohort row left from an earlier run closes its month on an earlier day:
    readers do not take it for a later one)."""
    parts = rebuild_parts()
    found = recompute(today, part)
    first = first or default_first(found.steps, today)
    last = min(last or today, today)
    stamp = rebuilt_at or access.utc_now().isoformat()
    mine = _of(part)
    # The cohorts first, the months after: a reader takes a cohort only with the months it
    # closes on kept whole (every part's), so a part killed between the two, or not run yet,
    # never shows a cohort without its customers.
    cohorts = revenue_rollups.write_cohorts(cohorts_of(found.steps, last, parts, part), rebuilt_at=stamp)
    # A product's, an interval's or a currency's months are all written each run, from the
    # history's first (in a split rebuild, the whole business's first kept month, the same in
    # every part): one item a month (a shard a part), and a view that first appears today (a
    # new currency) has its earlier months too, whatever ``first``.
    whole_first = default_first(found.steps, today)
    scopes = views_kept(found.histories, parts, add=True)
    if parts > 1 and (kept_first := revenue_rollups.first_month_kept()):
        whole_first = min(whole_first, month_first(kept_first))
    # Its days, unlike its months, only those of the months ``first``..``last`` touches (an
    # item a month: every night would otherwise write every view's every month). A day of a
    # view not kept (before the view's first rebuild) is recomputed when asked, never wrong.
    scoped = scoped_days = 0
    for scope in scopes:
        view = found.within(scope, today)
        scoped += revenue_rollups.write_cohorts(cohorts_of(view.steps, last, parts, part), rebuilt_at=stamp,
                                                scope=scope)
        rows = list(mine(day_rows(view.steps, min(first, whole_first).replace(day=1), last, parts,
                                  view.daily(parts))))
        scoped += revenue_rollups.write_months(month_rows(rows), rebuilt_at=stamp, scope=scope)
        scoped_days += revenue_rollups.write_view_days((row for row in rows if row.day >= first.replace(day=1)),
                                                       rebuilt_at=stamp, scope=scope)
    months = revenue_rollups.write_months(mine(recomputed_months(found, first, last, shards)), rebuilt_at=stamp)
    count = revenue_rollups.write_rollups(mine(day_rows(found.steps, first, last, shards, found.daily(shards))),
                                          rebuilt_at=stamp, written=written)
    return Rebuilt(first, last, count, shards, cohorts, months, len(scopes), scoped, scoped_days)


def views_kept(histories: list[SubHistory], parts: int, *, add: bool) -> list[Scope]:
    """The views (products, price intervals, currencies) a run keeps or checks: those its
    customers were ever in and every view a run has added to ``REVENUE#VIEWS`` (``add``:
    this run's own too; a view whose subscriptions are gone, an account erased, is kept as
    nothing); in a split rebuild also the catalog's, each kept as nothing by a part none of
    whose customers were in it, so that every view has every part's months. A view first seen by
    one part tonight, when another part ran before it, is whole from the next night's
    rebuild; until then it is recomputed, never wrong."""
    scopes = kept_scopes(histories)
    added = revenue_rollups.register_views(scopes) if add else revenue_rollups.registered_views()
    if parts == 1:
        return list(dict.fromkeys(scopes + added))
    return list(dict.fromkeys(scopes + catalog_scopes() + added))


def never_lived_in(scope: Scope) -> bool:
    """Whether no subscription was ever within ``scope`` as of the last rebuild: every view
    a rebuild keeps is added to ``REVENUE#VIEWS`` (one GetItem), so one not there is empty,
    and its figures are the empty history's (no account read). No list yet (the months kept
    by a rebuild of an earlier release, which kept no list and no view of two filters):
    not known, so the view is recomputed, never shown empty."""
    listed = revenue_rollups.views_listed()
    return listed is not None and scope not in set(listed)


def _of(part: Part | None) -> Callable[[Iterable[RollupDay]], Iterable[RollupDay]]:
    """What of the recomputed rows a run writes: all, or its part's shards."""
    if part is None:
        return lambda rows: rows
    return lambda rows: (row for row in rows if part.has(row.shard))


def cohorts_of(all_steps: list[Step], through: date, parts: int, part: Part | None = None) -> list[CohortRow]:
    """The cohort rows to keep: one per month (the whole business's customers) when the
    rebuild is not split, else one per month and part (``part``'s only, when one is given)."""
    if parts == 1:
        return cohort_table(all_steps, through)
    rows = []
    for index in range(parts) if part is None else (part.index,):
        each = Part(index, parts)
        rows += [replace(row, shard=index, shards=parts)
                 for row in cohort_table([s for s in all_steps if each.holds(s.customer)], through)]
    return rows


def recomputed_months(found: Recomputed, first: date, last: date, shards: int = SHARDS) -> list[RollupDay]:
    """The rows of every month ``first``..``last`` touches, from its first day (a month's row
    sums all its days, whatever ``--from``) to its last or ``last``."""
    return month_rows(day_rows(found.steps, first.replace(day=1), last, shards, found.daily(shards)))


def _shards(scope: Scope | None) -> int | None:
    """The shards a view's months are kept in (a part each), None for the whole business's
    (always ``SHARDS``)."""
    return None if scope is None else rebuild_parts()


def kept_months(first_month: str, last_month: str, scope: Scope | None = None,
                part: Part | None = None) -> dict[str, DayFigures]:
    """The kept months (of ``scope``, or the whole business), shards added up, by
    ``YYYY-MM`` (each a ``DayFigures`` of its close): one Query. A month whose shards close
    on different days (a killed rebuild's) is not complete."""
    return by_month(own(revenue_rollups.month_rows(first_month, last_month, scope), part, _shards(scope)))


def kept_month_closes(first: date, last: date, scope: Scope | None = None) -> dict[date, DayFigures]:
    """The kept months from ``first``'s to ``last``'s, shards added up, each at the day it
    closes (its movements its days' summed, its levels its close's): one Query, 16 items a
    month where ``kept_days`` reads a Query a month of 16 items a day."""
    return {figures.day: figures for figures in kept_months(month_of(first), month_of(last), scope).values()}


def kept_days(first: date, last: date, part: Part | None = None, scope: Scope | None = None) -> dict[date, DayFigures]:
    """The kept days ``first``..``last`` (of ``scope``: one Query; or the whole business: one
    Query a month), shards added up."""
    rows = (revenue_rollups.rollup_rows(months_of(first, last)) if scope is None
            else revenue_rollups.view_day_rows(month_of(first), month_of(last), scope))
    kept = merge(own(rows, part, _shards(scope)))
    return {d: f for d, f in kept.items() if first <= d <= last}


def kept_cohorts_of(first_month: str, last_month: str, scope: Scope | None = None,
                    part: Part | None = None) -> dict[str, CohortRow]:
    """The kept cohort rows of ``first_month``..``last_month`` (of ``scope``, or the whole
    business), the parts' added up: one Query."""
    return merged(own(revenue_rollups.cohort_rows(first_month, last_month, scope), part, rebuild_parts()))


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


def check(today: date, *, first: date | None = None, last: date | None = None, part: Part | None = None) -> Checked:
    """Compare the kept items with a recomputation (of ``part``'s customers and shards alone
    when one is given: a split rebuild's parts are checked as they are written)."""
    parts = rebuild_parts()
    found = recompute(today, part)
    first = first or default_first(found.steps, today)
    last = min(last or today, today)
    recomputed = merge(own(day_rows(found.steps, first, last, SHARDS, found.daily()), part))
    kept = kept_days(first, last, part)
    today_kept = kept[today].mrr if last == today and today in kept and kept[today].complete else None
    currencies = sorted({c for d in recomputed.values() for c in d.figures})
    found_differences = (differences(kept, recomputed)
                         + month_differences(own(recomputed_months(found, first, last), part), part=part)
                         + cohort_differences(cohorts_of(found.steps, last, parts, part), part=part))
    # a view's months are kept from the history's first (``rebuild``): none before it to compare
    scoped_first = max(first, default_first(found.steps, today))
    for scope in views_kept(found.histories, parts, add=False):
        view = found.within(scope, today)
        # its days from ``first``, as a rebuild from it wrote them (from the first of its month:
        # a month's counts open on its first day)
        rows = own(list(day_rows(view.steps, first.replace(day=1), last, parts, view.daily(parts))), part)
        found_differences += month_differences([row for row in month_rows(rows) if row.day >= scoped_first],
                                               scope, part)
        found_differences += view_day_differences(rows, first, last, scope, part)
        found_differences += cohort_differences(cohorts_of(view.steps, last, parts, part), scope, part)
    return Checked(first, last, len(recomputed), currencies, found_differences, today_kept, found.mrr_now)


def _named(what: str, scope: Scope | None) -> str:
    return what if scope is None else f"{what} {scope}"


def month_differences(recomputed: list[RollupDay], scope: Scope | None = None,
                      part: Part | None = None) -> list[tuple[date, str, str]]:
    """Each kept month (of ``scope``, or the whole business; ``part``'s rows alone when one
    is given, as ``recomputed`` is) whose row is not the recomputed one (one Query): (its
    close, ``month``, the scope and the currency or ``*``, what differs)."""
    if not recomputed:
        return []
    first, last = recomputed[0].day.isoformat()[:7], recomputed[-1].day.isoformat()[:7]
    kept = merge(own(revenue_rollups.month_rows(first, last, scope), part, _shards(scope)))
    return [(day, f"{_named('month', scope)} {currency}", what)
            for day, currency, what in differences(kept, merge(recomputed))]


def view_day_differences(recomputed: list[RollupDay], first: date, last: date, scope: Scope,
                         part: Part | None = None) -> list[tuple[date, str, str]]:
    """Each of ``scope``'s kept days ``first``..``last`` whose figures are not the recomputed
    ones (one Query): (the day, ``day``, the scope and the currency or ``*``, what
    differs). Only the days kept whole are compared: a view's days are kept from its first
    rebuild on (``rebuild``), and a day not kept is recomputed when asked, never wrong."""
    kept = {day: figures for day, figures in kept_days(first, last, part, scope).items() if figures.complete}
    theirs = {day: figures for day, figures in merge(recomputed).items() if day in kept}
    return [(day, f"{_named('day', scope)} {currency}", what)
            for day, currency, what in differences(kept, theirs)]


def cohort_differences(rows: list[CohortRow], scope: Scope | None = None,
                       part: Part | None = None) -> list[tuple[date, str, str]]:
    """Each cohort month (of ``scope``, or the whole business; ``part``'s rows alone when one
    is given) whose kept row is not the recomputed one (``rows``, a row a part when the
    rebuild is split; one Query of the cohorts' partition): (its first day, ``cohort`` and
    the scope, what differs)."""
    if not rows:
        return []
    recomputed = merged(own(rows, part))
    months = sorted(recomputed)
    kept = kept_cohorts_of(months[0], months[-1], scope, part)
    found = []
    for row in recomputed.values():
        mine = kept.get(row.month)
        if mine is None:
            found.append((month_first(row.month), _named("cohort", scope), f"{row.month} not kept"))
            continue
        wrong = [f"{name} kept {getattr(mine, name)} recomputed {getattr(row, name)}"
                 for name in ("through", "members", "retained", "mrr") if getattr(mine, name) != getattr(row, name)]
        if wrong:
            found.append((month_first(row.month), _named("cohort", scope), f"{row.month} " + ", ".join(wrong)))
    return found
