"""The Revenue page's filters (docs/ANALYTICS.md, "Filters"): by product, by price interval
and by currency. A filter keeps the subscriptions that were ever within it, each counted
only while it is: a switch into the product is a gain (new or reactivation), a switch out a
loss (churn), as ChartMogul's plan filters count them. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from billing.access.revenue_rollups import Scope
from billing.analytics.figures import Money
from billing.analytics.history import SubHistory, SubState
from billing.analytics.mrr import state_on
from billing.analytics.periods import BadRange
from billing.rules.pricing import Interval

# The price intervals, as the prices declare them (a filter's choices and its check).
INTERVALS = tuple(Interval)


def parse_price_interval(text: str | None) -> str:
    """The API's ``price_interval`` (none: every interval); ``BadRange`` for another word."""
    chosen = (text or "").strip().lower()
    if chosen and chosen not in INTERVALS:
        raise BadRange("price_interval", "price_interval is one of day, week, month, year.")
    return chosen


@dataclass(frozen=True)
class ReportFilter:
    product: str = ""  # a SKU
    interval: str = ""  # one of INTERVALS (every N months is "month")
    currency: str = ""  # an ISO 4217 code

    def __bool__(self) -> bool:
        return bool(self.product or self.interval or self.currency)

    @property
    def splits_money(self) -> bool:
        """Whether refunds and disputes can be kept to it: a refund names its currency, not
        the product or interval it was for."""
        return not (self.product or self.interval)

    @property
    def kept(self) -> bool:
        """Whether ``revenue_rebuild`` keeps this view's months and cohorts: every view, the
        whole business and any product, price interval and currency, alone or together
        (docs/ANALYTICS.md, "Kept for each product, interval and currency"), once a
        subscription was ever within it."""
        return True

    @property
    def scope(self) -> Scope | None:
        """The partition this view's kept figures are in (None: the whole business's): one
        filter's ``PRODUCT`` / ``NEWS-LITE``; two or three, their names and values joined by
        ``+`` (``PRODUCT+CURRENCY`` / ``NEWS-LITE+EUR``: no SKU, interval or currency code
        holds a ``+``)."""
        chosen = [(dimension, getattr(self, name)) for dimension, name in DIMENSIONS if getattr(self, name)]
        if not chosen:
            return None
        return Scope("+".join(d for d, _ in chosen), "+".join(v for _, v in chosen))

    @classmethod
    def of(cls, scope: Scope) -> ReportFilter:
        names = dict(DIMENSIONS)
        return cls(**{names[d]: v for d, v in zip(scope.dimension.split("+"), scope.value.split("+"), strict=True)})

    def holds(self, state: SubState) -> bool:
        return ((not self.product or state.sku == self.product)
                and (not self.interval or state.interval == self.interval)
                and (not self.currency or state.currency == self.currency))


# A view's dimensions, in the order a scope names them, and the filter's field for each.
DIMENSIONS = (("PRODUCT", "product"), ("INTERVAL", "interval"), ("CURRENCY", "currency"))


def scopes_of(sku: str, interval: str, currency: str) -> list[Scope]:
    """Every view a subscription of ``sku`` at an ``interval`` price in ``currency`` is
    within: each of the three alone, each two together, and all three."""
    values = [(d, v) for (d, _), v in zip(DIMENSIONS, (sku, interval, currency), strict=True) if v]
    found = []
    for size in range(1, len(values) + 1):
        for chosen in combinations(values, size):
            found.append(Scope("+".join(d for d, _ in chosen), "+".join(v for _, v in chosen)))
    return found


def scope_order(scope: Scope) -> tuple[int, int, str]:
    """One filter's views first (products, intervals, currencies), then two together, then
    three: the order a rebuild keeps them in."""
    dimensions = scope.dimension.split("+")
    first = [d for d, _ in DIMENSIONS].index(dimensions[0])
    return len(dimensions), first, f"{scope.dimension}#{scope.value}"


def histories_by_scope(histories: Sequence[SubHistory]) -> dict[Scope, list[SubHistory]]:
    """Each view the histories were ever in, with those histories (in their order): one
    pass over the histories, so that a rebuild's many views cost what the histories are,
    not the views times the histories."""
    found: dict[Scope, list[SubHistory]] = {}
    for history in histories:
        seen: set[Scope] = set()
        for state in history.states:
            seen.update(scopes_of(state.sku or "", state.interval or "", state.currency or ""))
        for scope in seen:
            found.setdefault(scope, []).append(history)
    return {scope: found[scope] for scope in sorted(found, key=scope_order)}


def kept_scopes(histories: Sequence[SubHistory]) -> list[Scope]:
    """Every view the histories were ever in (each product, price interval and currency,
    alone and together): the views ``revenue_rebuild`` keeps beside the whole business's."""
    return list(histories_by_scope(histories))


def filtered(histories: Sequence[SubHistory], within: ReportFilter) -> list[SubHistory]:
    """The histories ever within the filter, their states outside it marked ``outside``."""
    if not within:
        return list(histories)
    kept = []
    for history in histories:
        if any(within.holds(s) for s in history.states):
            kept.append(replace(history, states=tuple(
                s if within.holds(s) else replace(s, outside=True) for s in history.states)))
    return kept


def filtered_money(money: Sequence[Money], within: ReportFilter) -> list[Money]:
    """Refunds or disputes of the filter's currency; none under a product or interval filter
    (``splits_money``: the page says they are not split so)."""
    if not within.splits_money:
        return []
    return [m for m in money if not within.currency or m.currency == within.currency]


def filtered_usage(usage: Sequence[Money], histories: Sequence[SubHistory], within: ReportFilter) -> list[Money]:
    """The usage revenue within the filter: a paid charge's usage names its subscription, so
    under a product or interval filter it is kept when the subscription was within the
    filter on the day it was paid (unlike a refund or a dispute)."""
    if within.splits_money:
        return filtered_money(usage, within)
    by_key = {h.key: h for h in histories}
    kept = []
    for item in usage:
        history = by_key.get(item.subscription)
        state = state_on(history, item.day) if history is not None else None
        if state is not None and within.holds(state):
            kept.append(item)
    return kept
