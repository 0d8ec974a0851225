"""An account's close refunds the unused days counted from the billing day (the calendar
day of ``BILLING_TIMEZONE``), whatever the hour in UTC: two closes on Tokyo's 15 March, one
still the 14th in UTC, refund alike, as a close told the day does. And the merchant's
``subscription.*`` event carries the subscription as the API shows it on the billing day."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.access.outbox import subscription_event
from billing.actions import data_rights
from billing.models import MerchantEventType
from billing.operations import payments
from billing.rules.api_objects import subscription_object
from tests.builders import card, fresh, make_account, make_subscription
from tests.shop.conftest import _shop_table

pytestmark = pytest.mark.django_db

PAID = datetime(2027, 3, 1, 1, tzinfo=UTC)  # 1 March 10:00 in Tokyo: pays March
TOKYO_15TH_UTC_14TH = datetime(2027, 3, 14, 20, tzinfo=UTC)  # 15 March 05:00 in Tokyo
TOKYO_15TH_UTC_15TH = datetime(2027, 3, 15, 10, tzinfo=UTC)  # 15 March 19:00 in Tokyo


@pytest.fixture
def tokyo(request: pytest.FixtureRequest, settings) -> Iterator[None]:
    """Tokyo's calendar, on the billing table and the shop's (a close erases both)."""
    settings.BILLING_TIMEZONE = "Asia/Tokyo"
    yield from _shop_table("moto", request, settings)


def _paid_march(email: str):
    sub = make_subscription(make_account(email), payment_day=1, amount=3100, today=date(2027, 2, 1))
    sub = access.set_schedule(sub, next_payment=date(2027, 3, 1), last_payment=date(2027, 2, 1),
                              next_reminder=date(2027, 2, 22), last_reminder=date(2027, 1, 25))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    with time_machine.travel(PAID, tick=False):
        assert payments.take_payment(fresh(sub), run_date=date(2027, 3, 1)).status == "paid"
    return fresh(sub)


def test_a_close_refunds_the_days_after_the_billing_day_whatever_the_utc_hour(tokyo) -> None:
    early, late, told = (_paid_march(f"{name}@example.com") for name in ("early", "late", "told"))
    with time_machine.travel(TOKYO_15TH_UTC_14TH, tick=False):
        by_early = data_rights.close_account(early.account_id)
    with time_machine.travel(TOKYO_15TH_UTC_15TH, tick=False):
        by_late = data_rights.close_account(late.account_id)
        by_told = data_rights.close_account(told.account_id, today=date(2027, 3, 15))
    assert by_told.refunded["USD"] > 0
    assert by_early.refunded == by_late.refunded == by_told.refunded


def test_a_subscription_event_shows_the_subscription_on_the_billing_day(tokyo) -> None:
    sub = make_subscription(make_account(), payment_day=15, amount=999, today=date(2027, 2, 15))
    sub.TrialEnd = "2027-03-14"  # its last free day: trialing on the 14th, no longer on Tokyo's 15th
    with time_machine.travel(TOKYO_15TH_UTC_14TH, tick=False):
        event = subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, sub)
    assert event.Data == subscription_object(sub, date(2027, 3, 15))
    assert event.Data["status"] != subscription_object(sub, date(2027, 3, 14))["status"] == "trialing"
