"""Removing a metered price from a subscription (docs/USAGE.md "Removing a metered
price"), as Stripe deletes a metered item and bills its usage at the period's end: the
price stays until the last day paid for, the next payment bills its usage through that
day with the other items, and from then on it bills nothing. Until that payment it can be
kept (added again). Pure: dates and the subscription in hand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from django.utils.translation import gettext as _

from billing.models import Subscription
from billing.rules.switch import usage_only


def billed_until(end: date, last_day: str | None) -> date:
    """The day after the last one a metered price bills of a period ending before ``end``:
    ``end`` itself, or the day after a removed price's ``last_day``, whichever is first."""
    if last_day is None:
        return end
    return min(end, date.fromisoformat(last_day) + timedelta(days=1))


def billed_from(start: date, first_day: str | None) -> date:
    """The first day a metered price bills of a period beginning on ``start``: ``start``,
    or a replacing price's ``first_day``, whichever is later."""
    if first_day is None:
        return start
    return max(start, date.fromisoformat(first_day))


def last_day_billed(sub: Subscription) -> date | None:
    """The last day a price removed now still bills: the last day paid for (a period being
    retried is not paid: its usage through the day before it is still billed)."""
    if sub.PaidThroughDate:
        return date.fromisoformat(sub.PaidThroughDate)
    if sub.NextPaymentDate:
        return date.fromisoformat(sub.NextPaymentDate) - timedelta(days=1)
    return None


def why_not_removed(sub: Subscription, price_id: str) -> str | None:
    """Why ``price_id`` cannot be removed from ``sub`` (None: it can, or it is being
    removed already): a price the subscription does not bill, a subscription that has
    ended, or the price a subscription to usage alone is to (its plan: switch or cancel
    it instead)."""
    if price_id not in sub.metered_price_ids:
        return f"{price_id} is not one of the subscription's metered prices"
    if not sub.is_live or last_day_billed(sub) is None:
        return "the subscription has ended: it bills nothing more"
    if usage_only(sub) and price_id == sub.MeteredPriceId:
        return f"{price_id} is the price the subscription is to: switch or cancel the subscription instead"
    return None


def removable(sub: Subscription) -> list[str]:
    """The metered prices ``sub`` could remove now (none being removed already)."""
    ends = sub.metered_ends
    return [price_id for price_id in sub.metered_price_ids
            if price_id not in ends and why_not_removed(sub, price_id) is None]


def item_words(sub: Subscription, price_id: str, words: str, day_words: Callable[[str], str]) -> str:
    """A metered price's words as a page lists it on ``sub``: with its first day when it
    replaces another ("…, from 15 April 2027"), its last when it is removed ("…, until 14
    April 2027"). ``day_words``: how the page writes a day (ISO in, words out)."""
    first, last = sub.metered_starts.get(price_id), sub.metered_ends.get(price_id)
    if first:
        words = _("%(price)s, from %(day)s") % {"price": words, "day": day_words(first)}
    if last:
        words = _("%(price)s, until %(day)s") % {"price": words, "day": day_words(last)}
    return words
