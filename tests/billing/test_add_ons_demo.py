"""The demo's add-ons part: ``addons@example.com``'s Daily News digital with two add-ons from
its next payment, shown on its subscription page; a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model

from billing import access
from billing.management.demo import add_ons
from billing.operations import payments
from billing.rules.add_ons import add_ons_of

pytestmark = pytest.mark.django_db


def test_the_demo_sells_add_ons(moto_table, client) -> None:
    today = date(2027, 3, 10)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        assert add_ons.seed(today) == ["add-ons: no NEWS-DAILY product (seed_demo makes it)"]
        access.create_product("NEWS-DAILY", "Daily News digital", 999, "USD")
        assert add_ons.seed(today) == ["add-ons: addons@example.com's Daily News digital with 2 add-ons from "
                                       "2027-04-10 (next payment 1549 cents)"]
        assert add_ons.seed(today) == ["add-ons: addons@example.com has subscribed already"]
        user = get_user_model().objects.get(email=add_ons.EMAIL)
        [sub] = access.get_subscriptions_by_account(access.get_account_id_for_user(user.pk))
        assert [a.name for a in add_ons_of(sub)] == ["Weekend print edition", "Crosswords and puzzles"]
        assert payments.next_charge(sub).amount == 1549
        client.force_login(user)
        page = " ".join(client.get(f"/subscriptions/{sub.sub_id}/").content.decode().split())
    assert "Weekend print edition: $4.00 a month, from 10 Apr 2027" in page
    assert "Crosswords and puzzles: $1.50 a month, from 10 Apr 2027" in page
