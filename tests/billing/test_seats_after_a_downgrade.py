"""A switch of product waits for the next payment only until that payment: once the
downgrade is in force (its ``SwitchFrom`` day come), the seats and the add-ons change
again. The day a switch took effect stays on the item, so a check of ``SwitchFrom`` alone
refused them for ever after any downgrade."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine

from billing import access
from billing.actions import add_ons as add_on_actions
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from billing.actions import switch as switch_actions
from billing.operations import payments
from billing.rules.add_ons import AddOnRefused
from billing.rules.seats import SeatsRefused
from tests.builders import card, fresh

pytestmark = pytest.mark.django_db(databases=[])

MADE, SWITCHED, NEXT, AFTER = date(2027, 3, 10), date(2027, 3, 20), date(2027, 4, 10), date(2027, 4, 20)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def test_seats_and_add_ons_change_again_once_a_downgrade_is_in_force(table) -> None:
    for sku, name, amount in (("BIG", "Big", 2000), ("SMALL", "Small", 1000)):
        access.create_product(sku, name, amount, "USD")
    access.create_product("EXTRA", "Extra", 300, "USD", add_on=True)
    with at(MADE):
        sub = subscribing.subscribe(access.create_account("downgraded@example.com"), sku="BIG", product_name="Big",
                                    payment_day=10, amount=2000, currency="USD", card=card(), today=MADE,
                                    actor="customer").sub
    with at(SWITCHED):
        switch_actions.switch(fresh(sub), "SMALL", today=SWITCHED, actor="customer")
        # waiting for the next payment: both refused, in words
        with pytest.raises(SeatsRefused, match="A switch of product waits for your next payment"):
            seats.quote(fresh(sub), 2, today=SWITCHED)
        with pytest.raises(AddOnRefused, match="A switch of product waits for your next payment"):
            add_on_actions.add(fresh(sub), "price_default_EXTRA", today=SWITCHED, actor="customer")
    with at(NEXT):
        assert payments.take_payment(fresh(sub), run_date=NEXT).amount == 1000  # the downgrade in force
    assert fresh(sub).SwitchFrom == NEXT.isoformat()  # kept, as the day it took effect
    with at(AFTER):
        done = seats.change_quantity(fresh(sub), 2, "customer", today=AFTER)
        assert done.charged > 0 and fresh(sub).Quantity == 2
        added = add_on_actions.add(fresh(sub), "price_default_EXTRA", today=AFTER, actor="customer")
    assert (added.old_price, added.new_price) == (2000, 2300)
