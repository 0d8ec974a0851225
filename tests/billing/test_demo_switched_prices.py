"""The demo's switches of price (billing/management/demo/switched_prices.py), on moto: a
monthly switched to yearly at once (charged its year less the month's credit) and a yearly
switched to monthly from its year's end (nothing charged); a second run changes nothing."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine
from django.contrib.auth import get_user_model

from billing import access
from billing.management.demo import prices as demo_prices
from billing.management.demo import switched_prices

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)


def test_the_demo_switches_one_up_to_yearly_and_one_down_to_monthly_once(moto_table) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        demo_prices.seed(TODAY)
        lines = switched_prices.seed(TODAY)
        assert len(lines) == 2 and "charged now" in lines[0] and "0.00 USD charged now" in lines[1], lines
        user = get_user_model().objects.get(username=switched_prices.EMAIL)
        subs = access.get_subscriptions_by_account(access.get_account_id_for_user(user.pk))
        up, down = sorted(subs, key=lambda s: s.Interval or "")[::-1]
        assert (up.Interval, up.PaidThroughDate, up.SwitchFrom) == ("year", "2028-03-09", None)
        assert (down.Interval, down.PaymentAmount, down.SwitchFrom) == (None, 1200, "2028-03-10")
        again = switched_prices.seed(TODAY)
        assert again == [f"switched prices: {switched_prices.EMAIL} has switched already"]
        assert len(access.get_subscriptions_by_account(up.account_id)) == 2
