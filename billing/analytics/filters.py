"""The Revenue page's filters (docs/ANALYTICS.md, "Filters"): by product, by price interval
and by currency. A filter keeps the subscriptions that were ever within it, each counted
only while it is: a switch into the product is a gain (new or reactivation), a switch out a
loss (churn), as ChartMogul's plan filters count them. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

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
        """Whether ``revenue_rebuild`` keeps this view's months and cohorts: the whole
        business, one product, one price interval or one currency (docs/ANALYTICS.md, "Kept
        for one product, interval or currency"); two filters together are recomputed."""
        return sum(map(bool, (self.product, self.interval, self.currency))) <= 1

    @property
    def scope(self) -> Scope | None:
        """The partition this view's kept figures are in (None: the whole business's, or
        none when not ``kept``)."""
        if not self.kept or not self:
            return None
        if self.product:
            return Scope("PRODUCT", self.product)
        return Scope("INTERVAL", self.interval) if self.interval else Scope("CURRENCY", self.currency)

    @classmethod
    def of(cls, scope: Scope) -> ReportFilter:
        field_name = {"PRODUCT": "product", "INTERVAL": "interval", "CURRENCY": "currency"}[scope.dimension]
        return cls(**{field_name: scope.value})

    def holds(self, state: SubState) -> bool:
        return ((not self.product or state.sku == self.product)
                and (not self.interval or state.interval == self.interval)
                and (not self.currency or state.currency == self.currency))


def kept_scopes(histories: Sequence[SubHistory]) -> list[Scope]:
    """Every product, price interval and currency the histories were ever in: the views
    ``revenue_rebuild`` keeps beside the whole business's."""
    products = sorted({s.sku for h in histories for s in h.states if s.sku})
    intervals = sorted({s.interval for h in histories for s in h.states if s.interval})
    currencies = sorted({s.currency for h in histories for s in h.states if s.currency})
    return ([Scope("PRODUCT", p) for p in products] + [Scope("INTERVAL", i) for i in intervals]
            + [Scope("CURRENCY", c) for c in currencies])


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
