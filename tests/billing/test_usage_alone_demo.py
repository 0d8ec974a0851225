"""The demo's usage-alone part: ``payg@example.com`` subscribed to the metered API price
alone, its first payment a receipt of 0, today's 1,800 calls estimated at $1.60 on its
subscription page; a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model

from billing import access
from billing.management.demo import usage_alone, usage_alone_switched
from billing.management.demo.usage_alone import EMAIL
from billing.rules.switch import usage_only
from tests.billing.demo_parts import seed_after_prices_and_usage
from tests.builders import receipts_of

pytestmark = pytest.mark.django_db


def test_the_demo_pays_as_it_goes(moto_table, client) -> None:
    today = date(2027, 3, 10)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        seed_after_prices_and_usage(usage_alone, "usage alone", today)
        first = usage_alone.seed(today)
        assert "alone (no fixed fee): started" in first[0] and first[1].startswith("usage alone: 3 events")
        assert usage_alone.seed(today) == ["usage alone: 0 events of payg@example.com's calls today"]
        account_id = access.get_account_id_for_user(get_user_model().objects.get(email=EMAIL).pk)
        [sub] = access.get_subscriptions_by_account(account_id)
        assert usage_only(sub) and [int(r.ProcessedAmount) for r in receipts_of(sub)] == [0]
        client.force_login(get_user_model().objects.get(email=EMAIL))
        page = client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert "No fixed fee: you pay for your usage" in page and "$1.60" in page


def test_the_demo_plan_switched_to_the_calls_alone(moto_table, client) -> None:
    today = date(2027, 3, 10)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        seed_after_prices_and_usage(usage_alone_switched, "plan to usage alone", today)
        [line] = usage_alone_switched.seed(today)
        assert line == ("plan to usage alone: plan-to-payg@example.com's Developer API access pays API calls alone "
                        "from 2027-04-10 (no fee from then)")
        assert usage_alone_switched.seed(today) == ["plan to usage alone: plan-to-payg@example.com has switched "
                                                    "already"]
        user = get_user_model().objects.get(email=usage_alone_switched.EMAIL)
        [sub] = access.get_subscriptions_by_account(access.get_account_id_for_user(user.pk))
        assert usage_only(sub) and sub.metered_starts == {sub.MeteredPriceId: "2027-04-10"}
        assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [500]  # the month's plan, paid
        client.force_login(user)
        page = client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert "No fixed fee: you pay for your usage" in page, page[:800]
    assert ("You have Developer API access until your next payment; from 10 April 2027 there is no fixed fee, and "
            "you pay for your usage alone.") in page
