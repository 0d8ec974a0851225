"""The demo's metered subscription cancelled at its period's end: ``ending@example.com``'s
page shows its last usage charge, the day after its last day, as it stands (1,500 calls,
500 above the free 1,000: about $1.00); a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model

from billing import access
from billing.management.demo import usage_ending
from billing.management.demo.usage_ending import EMAIL
from tests.billing.demo_parts import seed_after_prices_and_usage

pytestmark = pytest.mark.django_db


def test_the_demo_shows_a_cancelled_subscriptions_last_usage_charge(moto_table, client) -> None:
    today = date(2027, 3, 10)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        seed_after_prices_and_usage(usage_ending, "usage ending", today)
        first = usage_ending.seed(today)
        assert "alone (no fixed fee): started" in first[0] and first[1].startswith("usage ending: 2 events")
        assert first[2] == (f"usage ending: {EMAIL}'s subscription cancelled at its period's end, 2027-04-09: its "
                            "last usage is charged the day after")
        assert usage_ending.seed(today) == [f"usage ending: 0 events of {EMAIL}'s calls today"]
        account_id = access.get_account_id_for_user(get_user_model().objects.get(email=EMAIL).pk)
        [sub] = access.get_subscriptions_by_account(account_id)
        client.force_login(get_user_model().objects.get(email=EMAIL))
        page = client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert sub.Status == "cancelled" and sub.CancelMode == "period_end"
    assert "Last payment, on 10 April 2027, for your usage up to the end" in page and "about $1.00" in page
