"""Removing and changing a metered price (billing/rules/metered_items.py, docs/USAGE.md
"Removing a metered price" and "Changing a metered price"): the days each price bills, the
last day a price removed now still bills, which prices can be removed and why not, and how
a page names a price that ends or begins. Pure: a subscription built in memory."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.utils import translation

from billing.access.prices import metered_prices
from billing.access.usage import billed_through, get_meter
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeteredEndMap, MeteredStartMap, Subscription, SubscriptionStatus
from billing.operations.metered import usages_over
from billing.rules.metered_items import (
    billed_from,
    billed_until,
    item_words,
    last_day_billed,
    removable,
    why_not_removed,
)
from billing.rules.pricing import PriceTerms
from billing.rules.projection import MeteredUsage
from billing.rules.usage_metadata import usage_metadata
from tests.api.test_api_several_metered_prices import two_meters

CALLS, STORAGE, SEATS = "price_calls", "price_storage", "price_seats"


def subscription(*, amount: int = 999, status: str = SubscriptionStatus.ACTIVE, paid_through: str | None = "2027-03-14",
                 next_payment: str | None = "2027-03-15", last_payment: str | None = "2027-02-15",
                 prices: tuple[str, ...] = (CALLS, STORAGE, SEATS), ends: dict[str, str] | None = None,
                 starts: dict[str, str] | None = None) -> Subscription:
    """A subscription with metered ``prices`` (the first is ``MeteredPriceId``), a fixed fee
    of ``amount`` (0: usage alone), ``ends`` (removed prices' last days) and ``starts``
    (replacing prices' first days); paid through 14 March 2027 by default."""
    return Subscription(
        Subscription.pk(account_id="acc_1"), Subscription.sk(sub_id="sub_1", sku="API"),
        Email="pat@example.com", SKU="API", PaymentDay=15, PaymentAmount=amount, Currency="USD",
        CreatedDate="2027-01-15T00:00:00+00:00", Status=status, PaidThroughDate=paid_through,
        NextPaymentDate=next_payment, LastPaymentDate=last_payment,
        MeteredPriceId=prices[0] if prices else None, OtherMeteredPriceIds=list(prices[1:]) or None,
        MeteredPriceEnds=[MeteredEndMap(PriceId=p, LastDay=d) for p, d in (ends or {}).items()] or None,
        MeteredPriceStarts=[MeteredStartMap(PriceId=p, FirstDay=d) for p, d in (starts or {}).items()] or None)


def test_a_price_with_no_last_day_bills_to_the_period_s_end() -> None:
    """No last day: the period's own end, whatever it is."""
    assert billed_until(date(2027, 3, 15), None) == date(2027, 3, 15)


@pytest.mark.parametrize(("last_day", "until"), [
    ("2027-02-20", date(2027, 2, 21)),  # removed now, mid-period: the day after its last day
    ("2027-03-14", date(2027, 3, 15)),  # removed at the period's end: the period's end
    ("2027-04-14", date(2027, 3, 15)),  # its last day is after this period: this period's end
])
def test_a_removed_price_bills_through_its_last_day_at_most(last_day: str, until: date) -> None:
    """A removed price bills the days through its last day, never past the period's end."""
    assert billed_until(date(2027, 3, 15), last_day) == until


@pytest.mark.parametrize(("first_day", "since"), [
    (None, date(2027, 2, 15)),  # not a replacing price: from the period's start
    ("2027-03-01", date(2027, 3, 1)),  # replacing one mid-period: from its first day
    ("2027-01-20", date(2027, 2, 15)),  # its first day was in an earlier period: from this one's start
])
def test_a_replacing_price_bills_from_its_first_day_at_the_earliest(first_day: str | None, since: date) -> None:
    """A price that replaces another bills from its first day, never before the period's start."""
    assert billed_from(date(2027, 2, 15), first_day) == since


def test_a_price_removed_now_bills_through_the_last_day_paid_for() -> None:
    """The last day paid for, as it is; else (being retried) the day before the next payment;
    else none (nothing more is billed)."""
    assert last_day_billed(subscription(paid_through="2027-03-14", next_payment="2027-03-20")) == date(2027, 3, 14)
    assert last_day_billed(subscription(paid_through=None, next_payment="2027-03-15")) == date(2027, 3, 14)
    assert last_day_billed(subscription(paid_through=None, next_payment=None)) is None


def test_only_a_price_the_subscription_bills_can_be_removed() -> None:
    """A price it does not bill is named in the refusal; one it bills, with a fixed fee
    beside it, can be removed, the first one too."""
    sub = subscription()
    assert why_not_removed(sub, "price_nope") == "price_nope is not one of the subscription's metered prices"
    assert why_not_removed(sub, CALLS) is None
    assert why_not_removed(sub, STORAGE) is None


@pytest.mark.parametrize("sub", [
    subscription(status=SubscriptionStatus.CANCELLED),  # ended, though it has a last day paid for
    subscription(paid_through=None, next_payment=None),  # live, but with no day left to bill
], ids=["cancelled", "no-day-left"])
def test_a_subscription_that_bills_nothing_more_removes_nothing(sub: Subscription) -> None:
    """A subscription that has ended, or has no last day to bill, refuses: it says so."""
    assert why_not_removed(sub, STORAGE) == "the subscription has ended: it bills nothing more"
    assert removable(sub) == []


def test_a_subscription_to_usage_alone_keeps_the_price_it_is_to() -> None:
    """With no fixed fee the first metered price is the plan: it is switched or cancelled,
    not removed; the others can be."""
    sub = subscription(amount=0)
    assert why_not_removed(sub, CALLS) == (
        f"{CALLS} is the price the subscription is to: switch or cancel the subscription instead")
    assert why_not_removed(sub, STORAGE) is None
    assert removable(sub) == [STORAGE, SEATS]


def test_the_prices_offered_for_removal_are_those_not_being_removed() -> None:
    """Every metered price that can go, in order; one being removed already is not offered
    again (it is offered to keep)."""
    assert removable(subscription()) == [CALLS, STORAGE, SEATS]
    assert removable(subscription(ends={STORAGE: "2027-03-14"})) == [CALLS, SEATS]
    assert removable(subscription(ends={CALLS: "2027-03-14", SEATS: "2027-03-14"})) == [STORAGE]


def day(iso: str) -> str:
    """How a test page writes a day: marked, so the day given is the one written."""
    return f"<{iso}>"


def test_a_price_s_words_name_its_first_and_last_days() -> None:
    """A price as it is: its words alone; one replacing another: from its first day; one
    removed: until its last day; one that does both: both, in that order."""
    sub = subscription(ends={STORAGE: "2027-03-14", SEATS: "2027-04-14"},
                       starts={CALLS: "2027-03-15", SEATS: "2027-03-15"})
    plain = subscription()
    assert item_words(plain, CALLS, "$0.20 a call", day) == "$0.20 a call"
    assert item_words(sub, CALLS, "$0.20 a call", day) == "$0.20 a call, from <2027-03-15>"
    assert item_words(sub, STORAGE, "$0.10 a GB", day) == "$0.10 a GB, until <2027-03-14>"
    assert item_words(sub, SEATS, "$5.00 a seat", day) == "$5.00 a seat, from <2027-03-15>, until <2027-04-14>"


def test_a_price_s_words_in_another_language() -> None:
    """The words around the days are the page's language's."""
    sub = subscription(ends={STORAGE: "2027-03-14"}, starts={CALLS: "2027-03-15"})
    with translation.override("it"):
        assert item_words(sub, CALLS, "0,20 $", day) == "0,20 $, dal <2027-03-15>"
        assert item_words(sub, STORAGE, "0,10 $", day) == "0,10 $, fino al <2027-03-14>"


# The period the payment of 15 March 2027 bills the usage of: 15 February to 14 March.
START, END = date(2027, 2, 15), date(2027, 3, 15)
# Each meter's events of the period (the calls summed, the storage's highest reading).
USAGE = [("api_calls", date(2027, 2, 15), 200), ("storage_gb", date(2027, 2, 18), 12),
         ("api_calls", date(2027, 2, 28), 1000), ("storage_gb", date(2027, 3, 1), 30),
         ("api_calls", date(2027, 3, 14), 35)]


def metered_subscription() -> tuple[Subscription, str, str]:
    """``two_meters``' subscription (a fee, the calls' price, the storage's) with ``USAGE``
    recorded; and its two prices' ids."""
    sub, calls, storage = two_meters()
    now = datetime(2027, 3, 14, 20, tzinfo=UTC)
    for n, (event_name, day_used, value) in enumerate(USAGE):
        moment = int(datetime(day_used.year, day_used.month, day_used.day, 10, tzinfo=UTC).timestamp())
        meter_actions.record_usage(get_meter(event_name), customer=sub.account_id, identifier=f"u{n}", value=value,
                                   timestamp=moment, now=now)
    return sub, calls.PriceId, storage.PriceId


def billed(usages: tuple) -> list[tuple]:
    """Each usage as an invoice names it: price, days, quantity and amount."""
    return [(u.price_id, u.start, u.end, u.quantity, u.amount) for u in usages]


@pytest.mark.django_db
def test_a_price_removed_mid_period_bills_and_closes_its_days_through_its_last_one(moto_table) -> None:
    """The storage removed on 20 February bills its usage of 15 to 20 February (12 GB, not
    the 30 of 1 March) and closes its meter through that day; the calls bill and close the
    whole period."""
    sub, calls, storage = metered_subscription()
    sub.MeteredPriceEnds = [MeteredEndMap(PriceId=storage, LastDay="2027-02-20")]
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        usages = usages_over(sub, START, END, close=True)
    assert billed(usages) == [(calls, START, END, 1235, 47), (storage, START, date(2027, 2, 21), 12, 120)]
    assert billed_through(sub.account_id, "api_calls") == "2027-03-14"
    assert billed_through(sub.account_id, "storage_gb") == "2027-02-20"


@pytest.mark.django_db
def test_a_price_with_no_day_to_bill_is_passed_over_and_the_ones_after_it_billed(moto_table) -> None:
    """A price gone from the catalog, one that replaces the storage from the day the period
    ends (no day of it yet), a price that is not metered: none bills, not even a line of
    nothing; the storage listed after them still does."""
    sub, calls, storage = metered_subscription()
    dearer = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(20)), actor="test",
                                     meter="storage_gb").PriceId
    fixed = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(500)), actor="test").PriceId
    sub.OtherMeteredPriceIds = ["price_API_gone", dearer, fixed, storage]
    sub.MeteredPriceStarts = [MeteredStartMap(PriceId=dearer, FirstDay=END.isoformat())]
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        usages = usages_over(sub, START, END, close=False)
    assert billed(usages) == [(calls, START, END, 1235, 47), (storage, START, END, 30, 300)]


@pytest.mark.django_db
def test_the_prices_in_hand_are_not_read_again(moto_table, ddb_requests) -> None:
    """The prices the caller has read are used as they are: per price, only its meter's
    GetItem and its usage's Query; a price not among them is read (its GetItem)."""
    sub, calls, storage = metered_subscription()
    prices = metered_prices(sub)
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        ddb_requests.reset()
        usages = usages_over(sub, START, END, close=False, prices=prices)
        assert ddb_requests.by_name() == Counter({"GetItem": 2, "Query": 2})
        assert usages_over(sub, START, END, close=False, prices={calls: prices[calls]}) == usages
    assert billed(usages) == [(calls, START, END, 1235, 47), (storage, START, END, 30, 300)]


def test_a_charge_s_usage_days_span_every_price_s_days() -> None:
    """A charge's metadata: the usage days run from the first day any price bills (the one
    removed on 20 February) to the day after the last (the one replacing the storage from 1
    March), then each price's own price, meter, quantity and amount; no usage, no keys."""
    removed = MeteredUsage("price_calls", "api_calls", date(2027, 2, 15), date(2027, 2, 21), 200, 0)
    replacing = MeteredUsage("price_dearer", "storage_gb", date(2027, 3, 1), date(2027, 3, 15), 30, 600)
    assert usage_metadata((removed, replacing)) == {
        "usage_start": "2027-02-15", "usage_end": "2027-03-15",
        "usage_price": "price_calls", "usage_meter": "api_calls", "usage_quantity": "200", "usage_amount": "0",
        "usage2_price": "price_dearer", "usage2_meter": "storage_gb", "usage2_quantity": "30", "usage2_amount": "600"}
    assert usage_metadata(()) == {}
