"""Subscribing in the portal to a product whose catalog has a metered price (docs/USAGE.md
"Subscribing in the portal"): the subscribe page shows the metered price beside the fixed
one in its words, the confirm page says its usage is billed in arrears and charges today
the fixed price only (the amount shown is the one charged), and the new subscription
names the metered price, so its page shows the usage so far and its next payment as it
stands, and that payment, taken by the payment run, bills the usage.
The usage figures are the API test's (1,235 calls, graduated: first 1,000 free)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access, batches
from billing.access.usage_billing import METERED_PRICE_ATTACHED
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.management.demo import prices as demo_prices
from billing.models import MeterAggregation
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.api.test_api_usage_billing import TERMS, VALUES
from tests.builders import GOOD_CARD, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 2, 15)  # subscribed on its payment day: a whole first month, 15 February to 14 March
PAY_DAY = date(2027, 3, 15)
QUOTE = re.compile(r'name="quote" value="([^"]+)"')
FIRST = re.compile(r'data-testid="first-charge">([^<]+?)\s*<')
USAGE_WORDS = "first 1,000 calls free, then $0.002 a call, a month"


@pytest.fixture
def travel():
    # Before the customer logs in: a session made before the travel would have expired.
    with time_machine.travel(datetime(2027, 2, 15, 12, tzinfo=UTC), tick=False):
        yield


@pytest.fixture
def metered(products):
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    return price_actions.add_price("API", TERMS["graduated"][0], actor="test", nickname="calls",
                                   unit_label="call", meter="api_calls")


def _at(day: date, hour: int = 12):
    return time_machine.travel(datetime(day.year, day.month, day.day, hour, tzinfo=UTC), tick=False)


def _subscribe(customer) -> tuple[str, object]:
    """Steps 1 and 2 for the API product: the confirm page's HTML and the subscription."""
    step = customer.client.post("/subscribe/", {"product": "API", "payment_day": "15", **GOOD_CARD})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    done = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert done.status_code == 302, done.content.decode()
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    return html, sub


def test_the_subscribe_page_shows_the_metered_price_beside_the_fixed_one(travel, customer, metered,
                                                                          ddb_requests) -> None:
    page = customer.client.get("/subscribe/")
    labels = dict(page.context["form"].fields["product"].choices)
    assert labels["API"] == f"Developer API — $9.99 a month · plus usage, billed in arrears: {USAGE_WORDS}"
    assert labels["NEWS-DAILY"] == "Daily News — $9.99 a month"  # a product without one: unchanged
    # its prices' page names it beside each fixed price of its currency
    html = customer.client.get("/subscribe/?product=API").content.decode()
    assert USAGE_WORDS in html
    # step 1 reads the metered price in the catalog's one Query: no request more
    ddb_requests.reset()
    step = customer.client.post("/subscribe/", {"product": "API", "payment_day": "15", **GOOD_CARD})
    assert step.status_code == 302 and ddb_requests.ops == ["Query", "Query"]


def test_subscribed_in_the_portal_its_next_payment_bills_the_usage(travel, customer, metered,
                                                                   ddb_requests) -> None:
    html, sub = _subscribe(customer)
    # the confirm page: the usage, billed in arrears; today the fixed price only
    # its words wrap at 390 px: not in a nowrap ``money`` cell, no table
    assert f'<dd class="col-sm-7" data-testid="usage">{USAGE_WORDS}' in html and "<table" not in html
    assert "Billed in arrears: each payment after the first adds your usage of the period just ended." in html
    assert "Today you pay the fixed price only." in html
    shown = FIRST.search(html)[1].strip()
    assert sub.MeteredPriceId == metered.PriceId and sub.is_live
    [first] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert shown == "$9.99" and first["amount"] == 999 and "usage_quantity" not in first["metadata"]
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == METERED_PRICE_ATTACHED]
    assert event.Actor == customer.email  # the customer's own action, audited

    for n, (day, value) in enumerate(VALUES):
        with _at(day, 10):
            meter_actions.record_usage(access.usage.get_meter("api_calls"), customer=sub.account_id,
                                       identifier=f"e{n}", value=value, timestamp=None,
                                       now=datetime(day.year, day.month, day.day, 10, tzinfo=UTC))
    # the subscription page, the evening before the payment: the usage so far and the
    # payment as it stands, what the run then charges
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
        ddb_requests.reset()
        page = customer.client.get(reverse("subscription", kwargs={"sub_id": sub.sub_id})).content.decode()
        read = list(ddb_requests.ops)
        dashboard = customer.client.get("/").content.decode()
    assert f"{USAGE_WORDS}\n" in page
    # the subscription, its history, its receipts in force; then the metered price, read
    # once for its words and its estimate; the seller's profile, the meter, its usage
    assert read == ["GetItem", "Query", "Query", "GetItem", "GetItem", "GetItem", "Query"], read
    assert ("Next payment: <span class=\"money\">about $10.46</span>. An estimate: it includes $0.47 for your usage "
            "so far (1235 api_calls). Your usage up to 14 March 2027 is added.") in page
    # the dashboard's upcoming payments are the fixed fee's (one Query, no usage read): said,
    # and "+ usage" leads to the usage page, where the estimate is
    usage_page = reverse("subscription_usage", kwargs={"sub_id": sub.sub_id})
    assert re.search(r'data-testid="upcoming-amount">\$9\.99 <a href="' + usage_page
                     + r'" data-testid="upcoming-usage">\+ usage</a></span>', dashboard), dashboard
    with _at(PAY_DAY):
        batches.run_payments(run_date=PAY_DAY, workers=1)
    second = next(r for r in receipts_of(sub) if r.UsageQuantity)
    assert (second.UsageQuantity, second.UsageAmount) == (1235, TERMS["graduated"][1])
    assert (second.UsageStart, second.UsageEnd) == ("2027-02-15", "2027-03-15")
    assert int(second.ProcessedAmount) == 999 + TERMS["graduated"][1]


def test_a_first_payment_confirmed_with_the_bank_keeps_the_metered_price(travel, customer, metered) -> None:
    step = customer.client.post("/subscribe/", {"product": "API", "payment_day": "15", **GOOD_CARD,
                                                "card_number": AUTHENTICATING_TEST_CARD})
    assert step.status_code == 302
    html = customer.client.get("/subscribe/confirm/").content.decode()
    clicked = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert clicked["Location"] == "/subscribe/authenticate/"
    # waiting on the bank: named already, so whichever way the payment is recorded keeps it
    [waiting] = access.get_subscriptions_by_account(customer.account_id)
    assert waiting.MeteredPriceId == metered.PriceId and not waiting.is_live
    customer.client.post("/subscribe/authenticate/", {"bank": "approve"})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.is_live and sub.MeteredPriceId == metered.PriceId


def test_a_metered_price_archived_between_the_steps_is_refused(travel, customer, metered) -> None:
    customer.client.post("/subscribe/", {"product": "API", "payment_day": "15", **GOOD_CARD})
    price_actions.archive_price(metered, actor="staff")
    response = customer.client.get("/subscribe/confirm/", follow=True)
    assert "This price has been archived" in response.content.decode()
    assert "nothing was charged" in response.content.decode()
    assert access.get_subscriptions_by_account(customer.account_id) == []


def test_the_demo_api_product_is_offered_with_its_usage(customer) -> None:
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    demo_prices.seed(TODAY)
    labels = dict(customer.client.get("/subscribe/").context["form"].fields["product"].choices)
    assert labels["API-ACCESS"].endswith(f"plus usage, billed in arrears: {USAGE_WORDS}")


def test_a_product_of_two_metered_prices_is_subscribed_with_both(travel, customer, metered) -> None:
    # The product's plan: its fee, its calls and its storage, each of its own meter (a second
    # price of the calls' meter, newer, is not offered: it would bill each call twice).
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    # prices are offered oldest first (by the second they were made): the storage after the calls
    with time_machine.travel(datetime(2027, 2, 15, 12, 0, 1, tzinfo=UTC), tick=False):
        storage = price_actions.add_price("API", TERMS["per_unit"][0], actor="test", nickname="storage",
                                          unit_label="GB", meter="storage_gb")
    with time_machine.travel(datetime(2027, 2, 15, 12, 0, 2, tzinfo=UTC), tick=False):
        price_actions.add_price("API", TERMS["per_unit"][0], actor="test", nickname="calls again", meter="api_calls")
    both = f"{USAGE_WORDS}; $0.005 a GB a month"
    labels = dict(customer.client.get("/subscribe/").context["form"].fields["product"].choices)
    assert labels["API"] == f"Developer API — $9.99 a month · plus usage, billed in arrears: {both}"
    html, sub = _subscribe(customer)
    assert f'data-testid="usage">{both}' in html and "Today you pay the fixed price only." in html
    assert sub.metered_price_ids == [metered.PriceId, storage.PriceId]
    [first] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert first["amount"] == 999  # the first payment bills no usage
