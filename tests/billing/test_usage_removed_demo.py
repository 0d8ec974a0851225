"""The demo's metered price being removed: the subscription billing the calls and the
storage also billed webhook deliveries, removed at the period's end (docs/USAGE.md
"Removing a metered price"); the pages say until when; a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from billing.management.demo import prices, usage, usage_billing, usage_meters, usage_removed, usage_repriced
from billing.operations import payments
from tests.builders import make_customer, make_subscription

pytestmark = pytest.mark.django_db


def _demo_customer(today: date, parts: tuple) -> tuple:
    """The demo customer with a monthly subscription, a month paid (its next payment, on
    10 April, bills March's usage), and the demo ``parts`` seeded."""
    customer = make_customer(CUSTOMER_EMAIL)
    sub = make_subscription(access.get_account(customer.account_id), payment_day=10, amount=999,
                            today=date(2027, 2, 10))
    sub = access.set_schedule(sub, next_payment=date(2027, 4, 10), last_payment=date(2027, 3, 10),
                              next_reminder=date(2027, 4, 3), last_reminder=date(2027, 3, 3))
    for part in parts:
        part.seed(today)
    return customer, sub


def test_the_demo_subscription_bills_its_webhooks_until_its_period_ends(moto_table) -> None:
    today = date(2027, 3, 10)
    assert "run the usage meters part first" in usage_removed.seed(today)[0]
    customer, sub = _demo_customer(today, (prices, usage, usage_billing, usage_meters))
    [line] = usage_removed.seed(today)
    webhooks = next(p for p in access.list_prices("API-ACCESS") if p.Nickname == "Webhooks")
    now = access.get_subscription(sub.account_id, sub.sub_id)
    assert now.metered_price_ids[-1] == webhooks.PriceId and now.metered_ends == {webhooks.PriceId: "2027-04-09"}
    assert "until 2027-04-09" in line
    assert usage_removed.seed(today) == [line]  # a second run: the same price, the same deliveries, one removal
    removals = [e for e in access.get_events_by_account(sub.account_id)
                if e.Action == "subscription.metered_price_removed"]
    assert len(removals) == 1
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        # the next payment still bills the deliveries so far, beside the calls and the storage
        coming = payments.next_charge(now)
        assert [u.meter for u in coming.usages][-1] == "webhook_deliveries"
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        page = customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id})
                                   + "?meter=webhook_deliveries").content.decode()
    assert 'data-testid="usage-ends"' in page


def test_the_demo_subscription_s_storage_changes_price_at_its_period_s_end(moto_table) -> None:
    today = date(2027, 3, 10)
    assert "run the usage meters part first" in usage_repriced.seed(today)[0]
    _, sub = _demo_customer(today, (prices, usage, usage_billing, usage_meters, usage_removed))
    [line] = usage_repriced.seed(today)
    named = {p.Nickname: p.PriceId for p in access.list_prices("API-ACCESS")}
    now = access.get_subscription(sub.account_id, sub.sub_id)
    assert now.metered_ends[named["Storage"]] == "2027-04-09"
    assert now.metered_starts == {named["Storage 2027"]: "2027-04-10"}
    assert line.endswith("from 2027-04-10")
    assert usage_repriced.seed(today) == [line]  # a second run: the same price, one change
    # every part run again (seed_demo twice): the storage being replaced is left as it is
    for part in (usage_meters, usage_removed, usage_repriced):
        part.seed(today)
    assert access.get_subscription(sub.account_id, sub.sub_id).metered_starts == now.metered_starts
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        # the next payment bills the storage at its old price, once
        coming = payments.next_charge(now)
    assert [u.price_id for u in coming.usages if u.meter == "storage_gb"] == [named["Storage"]]
