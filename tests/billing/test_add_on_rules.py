"""The add-ons' rules (billing/rules/add_ons.py), pure: each refusal in its words, which
payments bill an add-on (the days at each edge), what adding and removing leave, the
words a page shows, and the fee's split worked out by hand."""

from __future__ import annotations

from datetime import date

import pytest

from billing.models import Subscription, SubscriptionStatus
from billing.rules.add_ons import (
    MAX_ADD_ONS,
    AddOn,
    AddOnOffer,
    AddOnRefused,
    add_ons_amount,
    add_ons_of,
    add_ons_words,
    adding,
    billed_on,
    check_add,
    current_add_ons,
    fee_shares,
    next_add_ons,
    offer_refusal,
    plan_amount,
    removing,
    split_fee,
)

TODAY, NEXT = date(2027, 3, 25), date(2027, 4, 10)
STORAGE = AddOnOffer("price_default_STORAGE", "STORAGE", "Extra storage", 300, "USD", "month", 1)


def _sub(add_ons: list[AddOn] = (), **changes: object) -> Subscription:
    fields = dict(SKU="MAG", Email="a@example.com", PaymentDay=10, Currency="USD",
                  PaymentAmount=999 + sum(a.amount for a in add_ons if a.billed_on(NEXT)),
                  Status=SubscriptionStatus.ACTIVE, NextPaymentDate=NEXT.isoformat(), PaidThroughDate="2027-04-09",
                  CreatedDate="2027-03-10T00:00:00+00:00", AddOns=[a.stored() for a in add_ons] or None)
    fields.update(changes)
    return Subscription("ACC#a", "SUB#s#SKU#MAG", **fields)


def _refusal(sub: Subscription, offer: AddOnOffer = STORAGE) -> str:
    with pytest.raises(AddOnRefused) as caught:
        check_add(sub, offer, TODAY)
    assert offer_refusal(sub, offer, TODAY) == str(caught.value)
    return str(caught.value)


def test_each_refusal_in_its_words() -> None:
    assert _refusal(_sub(Status=SubscriptionStatus.PAST_DUE)) == (
        "Only an active subscription can change its add-ons (a past-due one pays what it owes first).")
    for state in ({"CancelMode": "period_end"}, {"PausedFrom": "2027-04-10"}, {"NextPaymentDate": None}):
        assert _refusal(_sub(**state)) == "A paused or cancelling subscription cannot change its add-ons."
    assert _refusal(_sub(SwitchFrom="2027-04-10")) == (
        "A switch of product waits for your next payment: change the add-ons after it.")
    assert _refusal(_sub(NextPaymentDate=TODAY.isoformat())) == (
        "Today's payment is due: change the add-ons once it is taken.")
    assert _refusal(_sub(PaymentAmount=0, MeteredPriceId="price_API_calls")) == (
        "A subscription to usage alone has no fixed fee to add to: it pays for its usage.")
    own = AddOnOffer("price_default_MAG", "MAG", "Magazine", 999, "USD", "month", 1)
    assert _refusal(_sub(), own) == "That is a price of your plan's own product: switch to it instead."
    euro = AddOnOffer("price_default_EU", "EU", "Euro", 300, "EUR", "month", 1)
    assert _refusal(_sub(), euro) == "That add-on is priced in another currency than the subscription."
    yearly = AddOnOffer("price_Y", "Y", "Yearly", 3000, "usd", "year", 1)
    assert _refusal(_sub(), yearly) == "That add-on is billed over other periods than the subscription's."
    every_two = AddOnOffer("price_T", "T", "Two", 600, "USD", "month", 2)
    assert _refusal(_sub(), every_two) == "That add-on is billed over other periods than the subscription's."
    alone = AddOnOffer("price_P", "P", "Plan", 100, "USD", "month", 1, sold_as_add_on=False)
    assert _refusal(_sub(), alone) == "That product is not sold as an add-on."
    seats = AddOnOffer("price_S", "S", "Seats", 100, "USD", "month", 1, per_seat=True)
    assert _refusal(_sub(), seats) == "A price sold by the seat cannot be an add-on: subscribe to it on its own."
    held = _sub([AddOn(STORAGE.price_id, "Extra storage", 300, date(2027, 3, 10))])
    assert _refusal(held) == "The subscription has that add-on already."
    full = _sub([AddOn(f"price_{n}", f"A{n}", 100, date(2027, 3, 10)) for n in range(MAX_ADD_ONS)])
    assert _refusal(full) == "A subscription has at most 5 add-ons."
    # a switch in force (its day come) no longer waits; a yearly plan takes a yearly add-on
    assert check_add(_sub(SwitchFrom="2027-03-10"), STORAGE, TODAY).first_day == NEXT
    assert check_add(_sub(Interval="year", IntervalCount=1, IntervalAnchor="2027-03-10"), yearly, TODAY).amount == 3000
    assert offer_refusal(_sub(), STORAGE, TODAY) is None
    # every 2 months: an add-on of that cadence, not a monthly one
    every_two_months = _sub(IntervalCount=2, IntervalAnchor="2027-03-10")
    assert check_add(every_two_months, every_two, TODAY).amount == 600
    assert _refusal(every_two_months) == "That add-on is billed over other periods than the subscription's."


def test_one_short_of_the_most_is_accepted() -> None:
    sub = _sub([AddOn(f"price_{n}", f"A{n}", 100, date(2027, 3, 10)) for n in range(MAX_ADD_ONS - 1)])
    change = adding(sub, STORAGE, TODAY)
    assert len(change.add_ons) == MAX_ADD_ONS and change.new_price == change.old_price + 300


def test_which_payments_bill_an_add_on() -> None:
    add_on = AddOn("p", "Extra", 300, NEXT, date(2027, 5, 9))
    assert [add_on.billed_on(day) for day in (date(2027, 4, 9), NEXT, date(2027, 5, 9), date(2027, 5, 10))] == [
        False, True, True, False]
    assert AddOn("p", "Extra", 300, NEXT).billed_on(date(2030, 1, 1))
    stored = add_on.stored()
    assert (stored.PriceId, stored.Name, stored.Amount, stored.FirstDay, stored.LastDay) == (
        "p", "Extra", 300, "2027-04-10", "2027-05-09")
    assert AddOn("p", "Extra", 300, NEXT).stored().LastDay is None
    sub = _sub([add_on, AddOn("q", "Other", 150, date(2027, 3, 10))])
    assert add_ons_of(sub) == [add_on, AddOn("q", "Other", 150, date(2027, 3, 10))]
    assert [a.price_id for a in billed_on(sub, date(2027, 3, 10))] == ["q"]
    assert [a.price_id for a in billed_on(sub, NEXT)] == ["p", "q"]
    assert [a.price_id for a in billed_on(sub, date(2027, 5, 10))] == ["q"]
    assert (add_ons_amount(sub), plan_amount(sub), int(sub.PaymentAmount)) == (450, 999, 1449)
    # no next payment (cancelled): those not removed
    ended = _sub([add_on, AddOn("q", "Other", 150, date(2027, 3, 10))], NextPaymentDate=None, PaymentAmount=1149)
    assert [a.price_id for a in next_add_ons(ended)] == ["q"]
    assert add_ons_of(_sub()) == [] and plan_amount(_sub()) == 999
    # in force today or to come: one ended before today is not
    gone = AddOn("g", "Gone", 100, date(2027, 2, 10), date(2027, 3, 24))
    assert [a.price_id for a in current_add_ons(_sub([gone, add_on]), TODAY)] == ["p"]
    assert [a.price_id for a in current_add_ons(_sub([gone]), date(2027, 3, 24))] == ["g"]


def test_adding_keeps_the_others_and_drops_the_ended() -> None:
    gone = AddOn("g", "Gone", 100, date(2027, 2, 10), date(2027, 3, 24))
    kept = AddOn("k", "Kept", 150, date(2027, 3, 10))
    change = adding(_sub([gone, kept]), STORAGE, TODAY)
    assert change.add_ons == (kept, AddOn(STORAGE.price_id, "Extra storage", 300, NEXT))
    assert (change.old_price, change.new_price, change.effective, change.price_id, change.added, change.name,
            change.amount) == (1149, 1449, NEXT, STORAGE.price_id, True, "Extra storage", 300)
    assert [m.PriceId for m in change.stored()] == ["k", STORAGE.price_id]


def test_removed_then_added_again_keeps_on_at_its_price() -> None:
    removed = AddOn(STORAGE.price_id, "Extra storage", 250, date(2027, 3, 10), date(2027, 4, 9))
    sub = _sub([removed])
    assert int(sub.PaymentAmount) == 999  # not billed by the next payment
    change = adding(sub, STORAGE, TODAY)
    assert change.add_ons == (AddOn(STORAGE.price_id, "Extra storage", 250, date(2027, 3, 10)),)
    assert (change.old_price, change.new_price, change.effective, change.price_id, change.added, change.name,
            change.amount) == (999, 1249, NEXT, STORAGE.price_id, True, "Extra storage", 250)


def test_removing_one_billed_keeps_it_until_the_next_payment() -> None:
    billed = AddOn(STORAGE.price_id, "Extra storage", 300, date(2027, 3, 10))
    other = AddOn("k", "Kept", 150, date(2027, 3, 10))
    change = removing(_sub([billed, other]), STORAGE.price_id, TODAY)
    assert change.add_ons == (AddOn(STORAGE.price_id, "Extra storage", 300, date(2027, 3, 10), date(2027, 4, 9)),
                              other)
    assert (change.old_price, change.new_price, change.effective, change.price_id, change.added, change.name,
            change.amount) == (1449, 1149, NEXT, STORAGE.price_id, False, "Extra storage", 300)


def test_removing_one_not_billed_yet_leaves_nothing() -> None:
    change = removing(_sub([AddOn(STORAGE.price_id, "Extra storage", 300, NEXT)]), STORAGE.price_id, TODAY)
    assert change.add_ons == () and change.stored() == [] and (change.old_price, change.new_price) == (1299, 999)


def test_removing_refusals() -> None:
    removed = AddOn(STORAGE.price_id, "Extra storage", 300, date(2027, 3, 10), date(2027, 4, 9))
    for sub in (_sub(), _sub([removed])):  # none, or removed already
        with pytest.raises(AddOnRefused, match="^The subscription has no such add-on.$"):
            removing(sub, STORAGE.price_id, TODAY)
    with pytest.raises(AddOnRefused, match="^A paused or cancelling subscription cannot change its add-ons.$"):
        removing(_sub([removed], PausedFrom="2027-04-10"), STORAGE.price_id, TODAY)


def test_the_words_a_page_shows() -> None:
    sub = _sub([AddOn("a", "Extra storage", 300, date(2027, 3, 10)),
                AddOn("b", "Priority support", 1500, NEXT),
                AddOn("c", "Crosswords", 150, date(2027, 3, 10), date(2027, 4, 9)),
                AddOn("d", "Gone", 100, date(2027, 2, 10), date(2027, 3, 1))])
    assert add_ons_words(sub, TODAY, lambda day: day.isoformat()) == [
        "Extra storage: $3.00 a month",
        "Priority support: $15.00 a month, from 2027-04-10",
        "Crosswords: $1.50 a month, until 2027-04-09"]
    # billed from today's payment: in force, no "from"
    assert add_ons_words(_sub([AddOn("t", "Today's", 100, TODAY)]), TODAY, str) == ["Today's: $1.00 a month"]
    yearly = _sub([AddOn("a", "Archive", 3000, date(2027, 3, 10))], Interval="year", IntervalCount=1,
                  IntervalAnchor="2027-03-10")
    assert add_ons_words(yearly, TODAY, str) == ["Archive: $30.00 a year"]


def test_the_fee_split_worked_out() -> None:
    # $9.99 and $3.00 a month, prices including 23 % VAT: $12.99, VAT $2.43
    assert split_fee(999, [300], net=1056, tax=243, gross=1299, prices_include_tax=True) == [
        (812, 187, 999), (244, 56, 300)]
    # the same prices before VAT added on top: the net shared, the tax in proportion
    assert split_fee(999, [300], net=1299, tax=299, gross=1598, prices_include_tax=False) == [
        (999, 230, 1229), (300, 69, 369)]
    # a coupon's $2.00 off: the fee shared in proportion to the prices
    assert fee_shares(999, [300], 1099) == [845, 254]
    # a plan of no fee of its own (usage alone is refused, but a negative part never counts)
    assert fee_shares(-5, [300], 300) == [0, 300]
    assert fee_shares(0, [300, 100], 400) == [0, 300, 100]


def test_a_switch_waits_for_the_add_ons_to_end() -> None:
    """A switch prices the plan alone: refused while an add-on is billed or to come, and
    until the last day paid of one removed; the day after, it may switch."""
    from billing.models import Product, ProductStatus
    from billing.rules.switch import SwitchRefused, check_switch

    small = Product("CATALOG", "SKU#SMALL", SKU="SMALL", Name="Small", PaymentAmount=500, Currency="USD",
                    Status=ProductStatus.ACTIVE, CreatedDate="2027-01-01")
    removed = AddOn(STORAGE.price_id, "Extra storage", 300, date(2027, 3, 10), TODAY)  # its last day: today
    for sub in (_sub([AddOn(STORAGE.price_id, "Extra storage", 300, NEXT)]), _sub([removed])):
        with pytest.raises(SwitchRefused) as refused:
            check_switch(sub, small, TODAY)
        assert str(refused.value) == ("A subscription with add-ons cannot switch its plan: remove its add-ons, then "
                                      "switch after your next payment.")
    assert check_switch(_sub([removed]), small, date(2027, 3, 26)) is small


def test_a_switch_waits_only_until_its_day() -> None:
    """``SwitchFrom`` is the day a downgrade takes effect: waiting before it, in force on it."""
    from billing.rules.switch import switch_pending

    assert switch_pending(_sub(SwitchFrom="2027-03-26"), TODAY)
    assert not switch_pending(_sub(SwitchFrom=TODAY.isoformat()), TODAY)
    assert not switch_pending(_sub(), TODAY)
    assert check_add(_sub(SwitchFrom=TODAY.isoformat()), STORAGE, TODAY).first_day == NEXT

