"""A subscription's metered price: which price's usage its payments bill in arrears
(docs/USAGE.md "Billing a period")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings

from billing.access._common import delete_entry, refused_as, utc_now
from billing.access.events import new_event
from billing.access.outbox import preview, subscription_event, transact_update
from billing.access.prices import get_price
from billing.exceptions import ConditionFailed
from billing.models import (
    MerchantEvent,
    MerchantEventType,
    MeteredEndMap,
    MeteredStartMap,
    Price,
    Subscription,
    UsageEndEntry,
)
from billing.rules.metered_items import last_day_billed, why_not_removed
from billing.rules.price_choice import bills_with, taxed_alike
from billing.rules.schedule import cadence_of, reminder_days
from billing.rules.tax import tax_behavior_word
from billing.rules.usage_metadata import MAX_METERED_PRICES

METERED_PRICE_ATTACHED = "subscription.metered_price_attached"
METERED_PRICE_REMOVED = "subscription.metered_price_removed"
METERED_PRICE_KEPT = "subscription.metered_price_kept"
METERED_PRICE_REPLACED = "subscription.metered_price_replaced"
# How long an entry outlives its day should no run delete it (runs catch up 31 days).
ENTRY_TTL_DAYS = 45


class NotMetered(ValueError):
    """The price is unknown, has no meter, is in another currency or of another cadence
    than the subscription, bills a meter the subscription bills already, or would be one
    metered price too many."""


def attach_metered_price(sub: Subscription, price_id: str, *, actor: str = "staff") -> Subscription:
    """From its next payment on, ``sub`` also pays the usage of ``price_id``'s meter over
    the period just ended: its first metered price (``MeteredPriceId``), or one more
    (``OtherMeteredPriceIds``, in order). A price being removed is kept (its last day
    forgotten). One transaction: the subscription (on its version: a stale copy is
    ``ConditionFailed``), the audit event and the merchant's ``subscription.updated``.
    ``NotMetered`` for a price that cannot be; a price it bills already: nothing written.
    Requests: the price's GetItem and, with one metered price or more, each one's GetItem
    (their meters)."""
    price = get_price(price_id)
    ends = sub.metered_ends
    if price is not None and price.PriceId in sub.metered_price_ids:
        if price.PriceId not in ends:
            return sub
        replaced_by = _replacing(sub, price)
        if replaced_by:  # its meter would be billed twice from then on
            raise NotMetered(f"{price.PriceId} is replaced by {replaced_by} at the period's end: remove "
                             f"{replaced_by} first")
        # Kept before its removal took effect: it bills on as if never removed.
        del ends[price.PriceId]
        return _write_metered(sub, sub.metered_price_ids, ends, actor=actor, action=METERED_PRICE_KEPT,
                              before={"MeteredPriceEnds": sub.metered_ends},
                              after={"MeteredPriceEnds": ends, "PriceId": price.PriceId})
    billed = {other.Meter for other in map(get_price, sub.metered_price_ids) if other is not None}
    refusal = why_not_metered(sub, price, price_id, billed)
    if refusal or price is None:
        raise NotMetered(refusal)
    # The audit records the attribute it fills, the first or the further ones.
    price_ids = [*sub.metered_price_ids, price.PriceId]
    name, value = ("OtherMeteredPriceIds", price_ids[1:]) if sub.metered_price_ids else ("MeteredPriceId", price.PriceId)
    # The merchant's ``subscription.updated`` carries its items with the new one (a metered
    # price named at subscribing joins after the first charge, so after ``subscription.created``).
    return _write_metered(sub, price_ids, ends, actor=actor, action=METERED_PRICE_ATTACHED,
                          before={name: getattr(sub, name)}, after={name: value, "Meter": price.Meter})


def remove_metered_price(sub: Subscription, price_id: str, *, actor: str = "staff",
                         today: date | None = None) -> Subscription:
    """``price_id`` leaves ``sub``, as Stripe deletes a metered item: its usage through its
    last day is billed by the next payment, with the other items, and none after it
    (docs/USAGE.md "Removing a metered price"). The last day: the last day paid for (at the
    period's end), or ``today`` (now: today's usage is the last billed, as Stripe bills a
    deleted item's usage up to its removal). Nothing is charged now. One transaction, as
    ``attach_metered_price``'s. ``NotMetered`` naming why it cannot be
    (``metered_items.why_not_removed``); one being removed already by that day or before:
    nothing written. No read."""
    refusal = why_not_removed(sub, price_id)
    if refusal:
        raise NotMetered(refusal)
    last_day = today or last_day_billed(sub)
    assert last_day is not None  # why_not_removed refuses a subscription without one
    ends = sub.metered_ends
    if price_id in ends and ends[price_id] <= last_day.isoformat():
        return sub
    before = {"MeteredPriceEnds": dict(ends)}
    ends[price_id] = last_day.isoformat()
    return _write_metered(sub, sub.metered_price_ids, ends, actor=actor, action=METERED_PRICE_REMOVED,
                          before=before, after={"MeteredPriceEnds": ends, "PriceId": price_id})


def replace_metered_price(sub: Subscription, price_id: str, new_price_id: str, *, actor: str = "staff",
                          today: date | None = None) -> Subscription:
    """``new_price_id``, a price of the same meter, replaces ``price_id`` at the period's
    end, as Stripe changes a metered item's price (docs/USAGE.md "Changing a metered
    price"): the next payment bills the meter's usage through the last day paid for at the
    old price, the payments after it at the new one. With ``today`` (now): the old price
    bills through today, the new one from tomorrow, both on the next payment, a line each.
    Nothing is charged now. One transaction, as ``attach_metered_price``'s. ``NotMetered``
    naming why it cannot be. Requests: the new price's GetItem and each metered price's
    (their meters)."""
    refusal = why_not_removed(sub, price_id)
    if refusal:
        raise NotMetered(refusal)
    if price_id in sub.metered_ends:  # its last day set already: add it again first
        raise NotMetered(f"{price_id} is being removed already: add it again first to change its price")
    price, new = get_price(price_id), get_price(new_price_id)
    if new is not None and price is not None and new.Meter != price.Meter:
        raise NotMetered(f"{new_price_id} bills {new.Meter}, not {price.Meter}: remove the one and add the other")
    if new is not None and new.PriceId in sub.metered_price_ids:
        raise NotMetered(f"the subscription bills {new_price_id} already")
    others = [get_price(other) for other in sub.metered_price_ids if other != price_id]
    refusal = why_not_metered(sub, new, new_price_id, {other.Meter for other in others if other is not None})
    if refusal or new is None:
        raise NotMetered(refusal)
    ends, starts = sub.metered_ends, sub.metered_starts
    last_day = today or last_day_billed(sub)
    assert last_day is not None  # why_not_removed refuses a subscription without one
    ends[price_id], starts[new.PriceId] = last_day.isoformat(), (last_day + timedelta(days=1)).isoformat()
    return _write_metered(sub, [*sub.metered_price_ids, new.PriceId], ends, starts, actor=actor,
                          action=METERED_PRICE_REPLACED, before={"PriceId": price_id},
                          after={"PriceId": new.PriceId, "LastDay": ends[price_id], "FirstDay": starts[new.PriceId]})


def _replacing(sub: Subscription, price: Price) -> str | None:
    """The price that replaces ``price`` from the day after its last one (None: none)."""
    last_day = sub.metered_ends.get(price.PriceId)
    if last_day is None:
        return None
    follows = (date.fromisoformat(last_day) + timedelta(days=1)).isoformat()
    return next((other for other, first in sub.metered_starts.items() if first == follows
                 and (found := get_price(other)) is not None and found.Meter == price.Meter), None)


@dataclass(frozen=True)
class MeteredItems:
    """A subscription's metered prices as a write leaves them: in order (the first is its
    ``MeteredPriceId``), the removed ones' last days and the replacing or later ones' first
    days (ISO dates), by price id."""

    price_ids: list[str]
    ends: dict[str, str]
    starts: dict[str, str]

    def stored(self) -> dict[str, object]:
        """The subscription's attributes that hold them, each None when empty."""
        return {
            "MeteredPriceId": self.price_ids[0] if self.price_ids else None,
            "OtherMeteredPriceIds": self.price_ids[1:] or None,
            "MeteredPriceEnds": [MeteredEndMap(PriceId=p, LastDay=d) for p, d in self.ends.items()] or None,
            "MeteredPriceStarts": [MeteredStartMap(PriceId=p, FirstDay=d) for p, d in self.starts.items()] or None,
        }

    def apply_to(self, sub: Subscription) -> None:
        """What the write stored, in memory as a fresh read would show it."""
        for name, value in self.stored().items():
            setattr(sub, name, value)


def metered_actions(items: MeteredItems) -> list:
    """The update actions that store ``items`` on a subscription (each attribute set, or
    removed when empty)."""
    return [getattr(Subscription, name).set(value) if value else getattr(Subscription, name).remove()
            for name, value in items.stored().items()]


def usage_alone_items(sub: Subscription, price: Price | None, price_id: str, first_day: date, *,
                      own: dict[str, Price] | None = None) -> MeteredItems:
    """``sub``'s metered prices once ``price`` is the one it is to alone, billing its
    meter's usage from ``first_day`` (the first day without the fixed fee: docs/USAGE.md
    "Usage alone of another metered price"), first in order. A price it bills already
    stays as it is; one of a meter it bills by another price replaces that price (its last
    day the day before ``first_day``, as ``replace_metered_price`` at the period's end); any
    other joins. Its other metered prices bill on, as a Stripe subscription keeps its other
    items when one is replaced. ``NotMetered`` naming why it cannot be. ``own``: its
    metered prices when the caller has read them (``prices.metered_prices``); else a
    GetItem of each (their meters)."""
    ids = sub.metered_price_ids  # the gone ones dropped, with their days, as every write drops them
    ends = {i: day for i, day in sub.metered_ends.items() if i in ids}
    starts = {i: day for i, day in sub.metered_starts.items() if i in ids}
    if price is not None and price.PriceId in ids:
        if price.PriceId in ends:  # alone, a price on its way out would leave nothing billed
            raise NotMetered(f"{price_id} is being removed: add it again first to keep it alone")
        return MeteredItems([price.PriceId, *(i for i in ids if i != price.PriceId)], ends, starts)
    if own is None:
        own = {other.PriceId: other for other in map(get_price, ids) if other is not None}
    alike = [other for other in own.values() if price is not None and other.Meter == price.Meter]
    day = first_day.isoformat()
    if any(starts.get(other.PriceId, "") >= day for other in alike):
        raise NotMetered(f"a change of {alike[0].PriceId} to another price is pending: undo it first")
    replaced = [other.PriceId for other in alike if other.PriceId not in ends]
    billed = {other.Meter for other in own.values() if other.PriceId not in replaced}
    # the count as replace_metered_price's: one replaced bills until its last day
    refusal = why_not_metered(sub, price, price_id, billed)
    if refusal or price is None:
        raise NotMetered(refusal)
    last = (first_day - timedelta(days=1)).isoformat()
    ends = {**ends, **{other: last for other in replaced}}
    return MeteredItems([price.PriceId, *ids], ends, {**starts, price.PriceId: day})


def _write_metered(sub: Subscription, price_ids: list[str], ends: dict[str, str], starts: dict[str, str] | None = None,
                   *, actor: str, action: str, before: dict, after: dict) -> Subscription:
    """``sub``'s metered prices become ``price_ids`` (in order; the gone ones it listed
    dropped), the removed ones' last days ``ends`` and the replacing ones' first days
    ``starts`` (default: as they are): the update on its version, its audit event and the
    merchant's ``subscription.updated``, one transaction."""
    # A gone price's days go with it (one added again bills afresh); a replacing price's
    # first day is written with it.
    def kept(days: dict[str, str]) -> dict[str, str]:
        return {price_id: day for price_id, day in days.items()
                if price_id in price_ids and price_id in sub.metered_price_ids}

    ends = kept(ends)
    starts = kept(sub.metered_starts) if starts is None else {
        price_id: day for price_id, day in starts.items() if price_id in price_ids}
    actions = metered_actions(MeteredItems(price_ids, ends, starts))
    updated = subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, preview(sub, actions))
    audit = new_event(sub.account_id, actor=actor, action=action, subject=sub.SK, before=before, after=after)
    # PynamoDB's transactional update checks and moves on the item's ``Version`` itself.
    return transact_update(sub, actions, Subscription.SK.exists(), items=[audit, updated])


def why_not_metered(sub: Subscription, price: Price | None, price_id: str, billed: set[str | None]) -> str | None:
    """Why ``price`` cannot join ``sub``'s metered prices (None: it can). ``billed``: the
    meters ``sub`` bills already."""
    if price is None or not price.Meter:
        return f"{price_id} is not a metered price"
    if price.Currency != sub.Currency:
        return f"{price_id} is in {price.Currency}, the subscription in {sub.Currency}"
    if not bills_with(price, sub.Interval, sub.IntervalCount):
        return (f"{price_id} is billed every {int(price.IntervalCount or 1)} {price.Interval}, the "
                f"subscription every {int(sub.IntervalCount or 1)} {sub.Interval or 'month'}")
    if not taxed_alike(price, getattr(sub, "TaxBehavior", None)):  # one charge bills both
        return (f"{price_id}'s tax_behavior is {tax_behavior_word(price.TaxBehavior)}, the subscription's "
                f"{tax_behavior_word(sub.TaxBehavior)}")
    if len(sub.metered_price_ids) >= MAX_METERED_PRICES:  # those being removed too: until then they bill
        return f"a subscription bills {MAX_METERED_PRICES} metered prices at most"
    if price.Meter in billed:  # two prices of one meter would bill each event twice
        return f"the subscription bills the meter {price.Meter} already"
    return None


def usage_end_entry(sub: Subscription, last_day: date, mode: str = "period_end", *, attempts: int = 0,
                    due: date | None = None) -> UsageEndEntry:
    """The entry that has the payment run of ``due`` (default: the day after ``last_day``)
    bill ``sub``'s last period's usage through ``last_day``; ``mode``: the cancel's. Its
    ``RemindOn``: the cadence's reminder lead before ``due`` (``schedule.reminder_days``)."""
    day = due or last_day + timedelta(days=1)
    lead = reminder_days(cadence_of(sub), settings.REMINDER_DAYS_BEFORE)
    return UsageEndEntry(UsageEndEntry.pk(), UsageEndEntry.sk(due=day.isoformat(), sub_id=sub.sub_id),
                         AccountId=sub.account_id, SubId=sub.sub_id, SKU=sub.key_sku, LastDay=last_day.isoformat(),
                         Mode=mode, Attempts=attempts, RemindOn=(day - timedelta(days=lead or 0)).isoformat(),
                         TTL=utc_now() + timedelta(days=ENTRY_TTL_DAYS))


def retry_usage_end(entry: UsageEndEntry, sub: Subscription, due: date) -> UsageEndEntry:
    """After a declined charge: the entry again, due on ``due``, its attempts counted (the
    new one put before the old one is deleted: never none)."""
    again = usage_end_entry(sub, date.fromisoformat(entry.LastDay), entry.Mode, attempts=int(entry.Attempts or 0) + 1,
                            due=due)
    again.save()
    if again.SK != entry.SK:
        delete_entry(entry)
    return again


def usage_end_entries(through: date, *, after: date | None = None) -> Iterator[UsageEndEntry]:
    """One Query: the entries due on ``through`` or before (and after ``after``), soonest
    first."""
    if after is None:
        return UsageEndEntry.query(UsageEndEntry.pk(), UsageEndEntry.SK <= f"{through.isoformat()}~")  # noqa: SIM300
    return UsageEndEntry.query(UsageEndEntry.pk(),
                               UsageEndEntry.SK.between(f"{after.isoformat()}~", f"{through.isoformat()}~"))


def claim_usage_reminder(entry: UsageEndEntry, day: date) -> None:
    """Claim the reminder of the last usage charge ``entry`` bills, before it is sent:
    ``RemindedOn`` set only if unset (so of two runs exactly one sends it), one UpdateItem.
    ``ConditionFailed``: claimed already, or the entry is gone (billed, or its subscription
    kept)."""
    with refused_as(ConditionFailed, entry.SK):
        entry.update([UsageEndEntry.RemindedOn.set(day.isoformat())],
                     condition=UsageEndEntry.SK.exists() & UsageEndEntry.RemindedOn.does_not_exist())


def record_last_usage_notice(entry: UsageEndEntry, day: date, notice: MerchantEvent) -> bool:
    """The merchant's ``invoice.upcoming`` of the last usage charge ``entry`` bills, once:
    one TransactWriteItems of the event and ``UpcomingNoticeOn`` set only if unset, while
    the entry is there. A re-run, a second run at once, or an entry billed or gone
    meanwhile: nothing written, False."""
    try:
        transact_update(entry, [UsageEndEntry.UpcomingNoticeOn.set(day.isoformat())],
                        UsageEndEntry.SK.exists() & UsageEndEntry.UpcomingNoticeOn.does_not_exist(),
                        items=[notice], check_version=False)
    except ConditionFailed:
        return False
    return True
