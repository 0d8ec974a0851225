"""A metered subscription's usage page (billing/views/usage_pages.py): the period its next
payment bills, day by day (a chart and a table), the usage so far and that payment as it
stands, from the function that charges it (the run then charges what it said); only the
customer's own subscription with a metered price has one."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access, batches
from billing.actions import meters as meter_actions
from tests.api.test_api_usage_billing import TERMS, VALUES
from tests.billing.test_portal_subscribe_metered import PAY_DAY, _at, _subscribe, metered, travel  # noqa: F401 (fixtures)
from tests.builders import make_subscription, receipts_of

# the metered product and its price, on 15 February 2027 (test_portal_subscribe_metered's)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("travel", "metered")]

DAY = re.compile(r'<rect x="\d+" y="\d+" width="9" height="(\d+)" fill="#0d6efd" data-day="([\d-]+)">')


def _usage_page(customer, sub, ddb_requests=None):
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        if ddb_requests is not None:
            ddb_requests.reset()
        return customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id}))


def test_the_usage_page_shows_each_day_and_the_payment_the_run_takes(customer, ddb_requests) -> None:
    _, sub = _subscribe(customer)
    before = customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id})).content.decode()
    # the period the first payment paid for is the one the next payment bills: none yet
    assert "So far: 0 api_calls, $0.00. Next payment: about $9.99" in before
    for n, (day, value) in enumerate(VALUES):
        with _at(day, 10):
            meter_actions.record_usage(access.usage.get_meter("api_calls"), customer=sub.account_id,
                                       identifier=f"e{n}", value=value, timestamp=None,
                                       now=datetime(day.year, day.month, day.day, 10, tzinfo=UTC))
    page = _usage_page(customer, sub, ddb_requests)
    html = page.content.decode()
    assert page.status_code == 200
    # the log-in's account, the subscription (a Query: the URL has no SKU), the metered
    # price; the estimate (the seller's profile, the meter, its usage: what the run reads)
    # and the days (the meter again, its days)
    assert ddb_requests.ops == ["GetItem", "Query", "GetItem", "GetItem", "GetItem", "Query", "GetItem", "Query"], \
        ddb_requests.ops
    assert "This period: 15 February 2027 to 14 March 2027, billed with the payment after it." in html
    assert "So far: 1235 api_calls, $0.47. Next payment: about $10.46, an estimate until the period ends." in html
    # how the $0.47 adds up, tier by tier
    parts = html.split('data-testid="usage-parts"')[1].split("</table>")[0]
    assert re.findall(r"<td>([^<]+)</td><td class=\"text-end money\">([^<]+)</td>", parts) == [
        ("1,000 calls free", "$0.00"), ("235 calls × $0.002", "$0.47")]
    assert "Usage so far</th><td class=\"text-end money\">$0.47</td>" in parts
    bars = {day: int(height) for height, day in DAY.findall(html)}
    # every day of the period so far, a day without calls at 0, the busiest the full height
    assert len(bars) == 28 and bars["2027-02-28"] == 120 and bars["2027-02-16"] == 0
    assert bars["2027-02-15"] == 24 and bars["2027-03-14"] == 4  # 200 and 35 of 1,000
    table = html.split('data-testid="usage-days"')[1]
    assert "<td>28 February 2027</td><td class=\"text-end\">1000</td>" in table
    assert "the period&#x27;s is their sum" in html or "the period's is their sum" in html
    # the run then charges what the page said
    with _at(PAY_DAY):
        batches.run_payments(run_date=PAY_DAY, workers=1)
    paid = next(r for r in receipts_of(sub) if r.UsageQuantity)
    assert (paid.UsageQuantity, paid.UsageAmount, int(paid.ProcessedAmount)) == (1235, TERMS["graduated"][1], 1046)
    # the subscription page links to it
    with _at(PAY_DAY):
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        detail = customer.client.get(reverse("subscription", kwargs={"sub_id": sub.sub_id})).content.decode()
    assert reverse("subscription_usage", kwargs={"sub_id": sub.sub_id}) in detail


def test_without_a_metered_price_or_for_another_customer_there_is_no_usage_page(customer, other_customer) -> None:
    _, sub = _subscribe(customer)
    assert other_customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id})).status_code == 404
    plain = make_subscription(access.get_account(customer.account_id), sku="NEWS-DAILY", payment_day=15,
                              amount=999, today=PAY_DAY)
    assert customer.client.get(reverse("subscription_usage", kwargs={"sub_id": plain.sub_id})).status_code == 404
