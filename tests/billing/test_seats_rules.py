"""The rules of a change of seats (billing/rules/seats.py, docs/MONEY.md M7), pure:
prorated by day with the schedule's rule, adding and removing the same seats the same day
nets to nothing, a charge never above the whole period's difference, the bounds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.models import Subscription, SubscriptionStatus
from billing.rules.schedule import anchor_on_or_before, period_amount, period_end
from billing.rules.seats import (
    MAX_QUANTITY,
    QuantityOutOfBounds,
    SeatsRefused,
    check_change,
    check_quantity,
    quantity_bounds,
    quantity_of,
    quote_seats,
    unit_amount_of,
)

pytestmark = pytest.mark.django_db(databases=[])


def subscription(*, unit: int, quantity: int | None, day: int, start: date, trial_end: date | None = None,
                 **extra: object) -> Subscription:
    """A subscription paid from the anchor date ``start`` through its period's end."""
    paid_through = period_end(day, start)
    return Subscription(
        "ACC#a", "SUB#s#SKU#TEAM", SKU="TEAM", Email="a@example.com", PaymentDay=day, Currency="USD",
        PaymentAmount=unit * (quantity or 1), UnitAmount=unit if quantity is not None else None, Quantity=quantity,
        Status=SubscriptionStatus.ACTIVE, NextPaymentDate=(paid_through + timedelta(days=1)).isoformat(),
        PaidThroughDate=paid_through.isoformat(), CreatedDate="2027-01-01T00:00:00+00:00",
        TrialEnd=trial_end.isoformat() if trial_end else None, **extra)


def _start_of(sub: Subscription) -> date:
    """The first day of the period ``sub`` has paid for."""
    return anchor_on_or_before(int(sub.PaymentDay), date.fromisoformat(sub.PaidThroughDate))


starts = st.dates(date(2026, 1, 1), date(2030, 12, 31))
days = st.integers(1, 31)
units = st.integers(1, 1_000_000)  # minor units a seat: up to 10,000.00
quantities = st.integers(1, 500)


@st.composite
def changes(draw: st.DrawFn) -> tuple[Subscription, date, int, int]:
    """A subscription of some seats paid for a regular period, a day inside it, seats added."""
    day, unit, quantity = draw(days), draw(units), draw(quantities)
    start = draw(starts)
    start = anchor_on_or_before(day, start)
    sub = subscription(unit=unit, quantity=quantity, day=day, start=start)
    paid_through = date.fromisoformat(sub.PaidThroughDate)
    today = start + timedelta(days=draw(st.integers(0, (paid_through - start).days)))
    return sub, today, quantity, draw(st.integers(1, 300))


@given(changes())
def test_adding_then_removing_the_same_seats_the_same_day_nets_to_nothing(change) -> None:
    sub, today, quantity, added = change
    more = quote_seats(sub, quantity + added, today)
    after = subscription(unit=unit_amount_of(sub), quantity=quantity + added, day=int(sub.PaymentDay),
                         start=_start_of(sub))
    fewer = quote_seats(after, quantity, today)
    assert more.more and not fewer.more
    assert more.due_now - fewer.credit_now == 0  # within rounding: the same rule, the same days
    assert more.credit_now == 0 and fewer.due_now == 0


@given(changes())
def test_a_charge_never_exceeds_the_whole_periods_difference(change) -> None:
    sub, today, quantity, added = change
    q = quote_seats(sub, quantity + added, today)
    difference = unit_amount_of(sub) * added
    assert 0 <= q.due_now <= difference
    # ... and it is the schedule's own price of the days left, nothing of days before today
    paid_through = date.fromisoformat(sub.PaidThroughDate)
    assert q.due_now == period_amount(difference, int(sub.PaymentDay), today, paid_through)
    assert q.new_price == unit_amount_of(sub) * (quantity + added)  # the next payments charge it


@given(changes())
def test_later_in_the_period_never_costs_more(change) -> None:
    sub, today, quantity, added = change
    paid_through = date.fromisoformat(sub.PaidThroughDate)
    if today < paid_through:
        assert quote_seats(sub, quantity + added, today + timedelta(days=1)).due_now \
            <= quote_seats(sub, quantity + added, today).due_now
    # on the period's first day the change costs the whole period's difference
    start = _start_of(sub)
    assert quote_seats(sub, quantity + added, start).due_now == unit_amount_of(sub) * added


def test_the_examples_to_the_cent() -> None:
    # $10.00 a seat, paid 10 March .. 9 April (31 days); on 25 March 16 days are left
    sub = subscription(unit=1000, quantity=5, day=10, start=date(2027, 3, 10))
    q = quote_seats(sub, 7, date(2027, 3, 25))
    assert (q.old_price, q.new_price, q.due_now, q.credit_now) == (5000, 7000, 1032, 0)
    q = quote_seats(sub, 2, date(2027, 3, 25))
    assert (q.new_price, q.due_now, q.credit_now) == (2000, 0, 1548)
    # a subscription made before seats: one seat at its whole price
    plain = subscription(unit=1200, quantity=None, day=10, start=date(2027, 3, 10))
    assert (quantity_of(plain), unit_amount_of(plain)) == (1, 1200)
    assert quote_seats(plain, 3, date(2027, 3, 10)).due_now == 2400


def test_a_free_trials_days_are_free_whatever_the_seats() -> None:
    sub = subscription(unit=1000, quantity=1, day=10, start=date(2027, 3, 10), trial_end=date(2027, 4, 9))
    q = quote_seats(sub, 4, date(2027, 3, 20))
    assert (q.due_now, q.credit_now, q.trial_end, q.new_price) == (0, 0, date(2027, 4, 9), 4000)


@given(st.integers(-5, MAX_QUANTITY + 5))
def test_the_default_bounds_are_one_to_ten_thousand(quantity: int) -> None:
    if 1 <= quantity <= MAX_QUANTITY:
        assert check_quantity(quantity) == quantity
    else:
        with pytest.raises(QuantityOutOfBounds):
            check_quantity(quantity)


@dataclass
class PriceLike:
    MinQuantity: int | None = None
    MaxQuantity: int | None = None


@given(st.integers(1, 50), st.integers(0, 50), st.integers(-5, 120))
def test_a_prices_bounds_are_used_when_it_has_them(low: int, span: int, quantity: int) -> None:
    bounds = quantity_bounds(PriceLike(low, low + span))
    assert bounds == (low, low + span)
    if low <= quantity <= low + span:
        assert check_quantity(quantity, bounds) == quantity
    else:
        with pytest.raises(QuantityOutOfBounds) as refused:
            check_quantity(quantity, bounds)
        assert (refused.value.low, refused.value.high) == bounds
    assert quantity_bounds(PriceLike(None, 7)) == (1, 7) and quantity_bounds(None) == (1, MAX_QUANTITY)


@pytest.mark.parametrize("value", [True, 2.5, "3", None])
def test_only_whole_numbers_are_quantities(value: object) -> None:
    with pytest.raises(QuantityOutOfBounds):
        check_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "words"), [
    ({"Status": SubscriptionStatus.PAST_DUE}, "active"),
    ({"CancelMode": "period_end"}, "paused or cancelling"),
    ({"PausedFrom": "2027-04-10"}, "paused or cancelling"),
    ({"SwitchFrom": "2027-04-10"}, "switch of product"),
])
def test_only_a_running_subscription_changes_its_seats(change: dict, words: str) -> None:
    sub = subscription(unit=1000, quantity=2, day=10, start=date(2027, 3, 10))
    assert check_change(sub, 3) == 3
    for name, value in change.items():
        setattr(sub, name, value)
    with pytest.raises(SeatsRefused, match=words):
        check_change(sub, 3)


def test_the_same_quantity_is_no_change() -> None:
    sub = subscription(unit=1000, quantity=2, day=10, start=date(2027, 3, 10))
    with pytest.raises(SeatsRefused, match="already"):
        check_change(sub, 2)


def test_not_while_a_payment_is_due() -> None:
    # The payment day's lock: the run may be charging the old number for the next period.
    sub = subscription(unit=1000, quantity=2, day=10, start=date(2027, 3, 10))  # next payment 10 April
    assert check_change(sub, 3, today=date(2027, 4, 9)) == 3
    for day in (date(2027, 4, 10), date(2027, 4, 11)):
        with pytest.raises(SeatsRefused, match="payment is due"):
            check_change(sub, 3, today=day)
