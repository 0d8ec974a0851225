"""Ending (or keeping) a subscription whose metered price bills usage in arrears: ending it
still charges the usage up to its last day, so its cancel page, messages, alerts and
e-mails say so, and never "nothing more is charged"; a staff cancel bills it too; and a
next payment announced before its usage is known is the fee plus the usage
(docs/USAGE.md "Billed at a cancellation").
The usage "ending now" charges, shown before the customer confirms, is the amount the
cancel charges: the page reads it through the function the charge is made by
(``final_usage.usage_due``). The figures are the portal's metered test's: the first
1,000 calls free, then $0.002 a call."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from billing import access, batches
from billing.actions import meters as meter_actions
from core.payments.gateway import get_gateway
from tests.billing.test_portal_subscribe_metered import QUOTE, _subscribe, metered, travel  # noqa: F401 (its fixtures)
from tests.builders import GOOD_CARD, fresh

pytestmark = pytest.mark.django_db

CANCEL_DAY = date(2027, 3, 2)  # 1,200 calls so far: 200 above the free 1,000, $0.40
NOW_LABEL = re.compile(r"Your usage so far, (\$[0-9.]+), is charged")


def _use(sub, calls: list[tuple[date, int]]) -> None:
    meter = access.usage.get_meter("api_calls")
    for n, (day, value) in enumerate(calls):
        at = datetime(day.year, day.month, day.day, 10, tzinfo=UTC)
        with time_machine.travel(at, tick=False):
            meter_actions.record_usage(meter, customer=sub.account_id, identifier=f"e{n}", value=value,
                                       timestamp=None, now=at)


def _cancel_page(customer, sub) -> str:
    customer.client.force_login(get_user_model().objects.get(pk=customer.user_id))
    return customer.client.get(reverse("cancel", kwargs={"sub_id": sub.sub_id})).content.decode()


def _usage_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "usage"]


def test_ending_now_charges_the_usage_so_far_the_page_showed(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 15), 200), (date(2027, 2, 28), 1000)])
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        page = _cancel_page(customer, sub)
        shown = NOW_LABEL.search(page)
        assert shown is not None, page
        # the fee's days after today are refunded beside it; "nothing more" is said nowhere
        assert "is refunded to your card" in page and "nothing more is charged" not in page.lower()
        assert "Either way your usage up to the last day is still charged, and nothing else." in page
        assert "Your usage until then is charged on 15 March 2027, and nothing else." in page
        done = customer.client.post(reverse("cancel", kwargs={"sub_id": sub.sub_id}),
                                    {"when": "now", "reason": "too_expensive", "version": fresh(sub).Version},
                                    follow=True).content.decode()
    [charge] = _usage_charges(sub)
    assert shown[1] == "$0.40" and charge["amount"] == 40  # what the page said is what was charged
    assert "$0.40 for your usage up to today is charged to your card." in done
    [told] = [m for m in mail.outbox if "cancelled" in m.subject.lower() and m.to == [sub.Email]]
    assert "only your usage up to then is still charged" in told.body
    assert "Your usage up to then is charged to your card: $0.40." in told.body
    assert "nothing more will be charged" not in told.body


def test_ending_at_the_period_end_says_when_its_usage_is_charged_and_charges_it_then(
        travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 15), 200), (date(2027, 2, 28), 1000), (date(2027, 3, 14), 35)])
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        _cancel_page(customer, sub)
        done = customer.client.post(reverse("cancel", kwargs={"sub_id": sub.sub_id}),
                                    {"when": "period_end", "reason": "too_expensive",
                                     "version": fresh(sub).Version}, follow=True).content.decode()
    assert ("it runs until 14 March 2027, and your usage until then is charged on 15 March 2027. You can keep it "
            "until then.") in done
    assert ("Cancels on 14 March 2027: it runs until the end of that day; your usage until then is charged the "
            "day after, and nothing else.") in done
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        ended = customer.client.get(reverse("cancelled", kwargs={"sub_id": sub.sub_id})).content.decode()
    assert "Your usage up to its last day is charged on 15 March 2027; no other payment will be taken." in ended
    [told] = [m for m in mail.outbox if "ends on" in m.subject and m.to == [sub.Email]]
    assert "your usage until it ends is charged on 15 March 2027, and nothing else will be charged." in told.body
    assert _usage_charges(sub) == []  # nothing yet: the period runs on
    # the day it said: the run bills the period's usage, 1,235 calls (235 above the free 1,000)
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches.run_payments(run_date=date(2027, 3, 15), workers=1)
    [charge] = _usage_charges(sub)
    assert charge["amount"] == 47


def test_a_plain_subscription_still_says_nothing_more_is_charged(travel, customer) -> None:  # noqa: F811
    step = customer.client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": "15", **GOOD_CARD})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    page = _cancel_page(customer, sub)
    assert "Nothing more is charged." in page and "usage" not in page.lower()


def test_usage_alone_reads_as_usage_in_arrears_on_its_cancel_page(travel, customer, metered) -> None:  # noqa: F811
    step = customer.client.post("/subscribe/", {"product": "API", "price": metered.PriceId, "payment_day": "15",
                                                **GOOD_CARD})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    _use(sub, [(date(2027, 2, 20), 1500)])
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        page = _cancel_page(customer, sub)
    assert "You pay for your usage in arrears: your next payment, on 15 March 2027, is $1.00 so far." in page
    assert "in advance" not in page and "You have paid up to" not in page
    assert "Your usage so far, $1.00, is charged; nothing is refunded." in page


def test_staff_cancelling_a_metered_subscription_still_bills_its_last_periods_usage(
        travel, customer, metered) -> None:  # noqa: F811
    """Staff's cancel (the support role's) ends the service at the period's end with no
    refund; the usage up to that day is charged the day after, as a customer's cancel at
    period end charges it, by the entry the cancel's own transaction puts."""
    from tests.billing.test_staff_prices import staff_client

    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 15), 200), (date(2027, 2, 28), 1000), (date(2027, 3, 14), 35)])
    support = staff_client("support")
    url = reverse("admin:staff_cancel", args=[sub.account_id, sub.sub_id])
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        support.force_login(get_user_model().objects.get(email="support@rpay.localhost"))
        question = support.get(url).content.decode()
        assert "but for its usage up to its last paid day, charged the day after." in question
        assert support.post(url, {"version": fresh(sub).Version}).status_code == 302
    assert fresh(sub).Status == "cancelled" and _usage_charges(sub) == []
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches.run_payments(run_date=date(2027, 3, 15), workers=1)
        batches.run_payments(run_date=date(2027, 3, 15), workers=1)  # a re-run bills nothing more
    [charge] = _usage_charges(sub)
    assert charge["amount"] == 47  # 1,235 calls through 14 March: 235 above the free 1,000
    # its receipt e-mail, as every charge's, once over the two runs
    [receipt_mail] = [m for m in mail.outbox if m.subject.startswith("Invoice") and "Total: $0.47" in m.body]
    assert "api_calls: 235 calls × $0.002" in receipt_mail.body


def test_keeping_a_metered_subscription_announces_its_fee_plus_its_usage(travel, customer, metered) -> None:  # noqa: F811
    """The next payment after a keep is the fee and the usage of the period, not the fee
    alone (the usage is not known yet): the message and the e-mail say both."""
    _html, sub = _subscribe(customer)
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        _cancel_page(customer, sub)
        customer.client.post(reverse("cancel", kwargs={"sub_id": sub.sub_id}),
                             {"when": "period_end", "reason": "too_expensive", "version": fresh(sub).Version})
        kept = customer.client.post(reverse("keep", kwargs={"sub_id": sub.sub_id}),
                                    {"version": fresh(sub).Version}, follow=True).content.decode()
    assert "Your subscription continues. The next payment is $9.99 plus your usage on 15 March 2027." in kept
    [told] = [m for m in mail.outbox if "continues" in m.subject and m.to == [sub.Email]]
    assert "The next payment is $9.99 plus your usage on 15 March 2027" in told.body


def test_the_next_payment_in_words_of_each_kind_of_subscription() -> None:
    from billing.rules.cadence_words import next_payment_words

    assert next_payment_words("$9.99", metered=False, usage_alone=False) == "$9.99"
    assert next_payment_words("$9.99", metered=True, usage_alone=False) == "$9.99 plus your usage"
    assert next_payment_words("$0.00", metered=True, usage_alone=True) == "your usage of the period"


def test_the_change_day_page_offers_a_metered_subscriptions_fee_plus_its_usage(
        travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    page = customer.client.get(reverse("change_day", kwargs={"sub_id": sub.sub_id})).content.decode()
    assert re.search(r"The 20th: next payment \$[0-9.]+ plus your usage on 15 Mar 2027", page), page


def test_a_subscription_ending_at_its_period_end_shows_its_last_usage_charge_as_it_stands(
        travel, customer, metered, ddb_requests) -> None:  # noqa: F811
    """Cancelled at its period's end, it has no next payment, but its usage up to the last
    day is still charged, the day after: the subscription and usage pages show that last
    charge as it stands, by the function that makes it, and the run then charges it."""
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 15), 200), (date(2027, 2, 28), 1000)])
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        _cancel_page(customer, sub)
        customer.client.post(reverse("cancel", kwargs={"sub_id": sub.sub_id}),
                             {"when": "period_end", "reason": "too_expensive", "version": fresh(sub).Version})
        ddb_requests.reset()
        page = customer.client.get(reverse("subscription", kwargs={"sub_id": sub.sub_id})).content.decode()
        read = list(ddb_requests.ops)
        usage = customer.client.get(reverse("subscription_usage", kwargs={"sub_id": sub.sub_id})).content.decode()
    assert ("Last payment, on 15 March 2027, for your usage up to the end: <span class=\"money\">about $0.40</span>. "
            "An estimate: it includes $0.40 for your usage so far (1200 api_calls). Your usage up to 14 March 2027 "
            "is added.") in page
    # the subscription (a Query: the URL has no SKU), its history; the metered price, then
    # what the last charge reads (the meter, its usage, the seller's profile): no more than
    # a renewal's estimate reads
    assert read == ["Query", "Query", "GetItem", "GetItem", "Query", "GetItem"], read
    assert "This last period: 15 February 2027 to 14 March 2027, when the subscription ends; its usage is charged " \
           "on 15 March 2027." in usage
    assert "So far: 1200 api_calls, $0.40. Last payment: about $0.40, an estimate until the period ends." in usage
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches.run_payments(run_date=date(2027, 3, 15), workers=1)
    [charge] = _usage_charges(sub)
    assert charge["amount"] == 40  # what the pages said, no usage having come since
