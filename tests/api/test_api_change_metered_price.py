"""A metered price changed at the period's end (docs/USAGE.md "Changing a metered price"),
as Stripe changes a metered item's price: the next payment bills the meter's usage
through the last day paid for at the old price, every payment after it at the new one;
one charge never bills the meter twice. Refused: a price of another meter (remove the
one, add the other), one billed already, one not metered; keeping the old price while
another replaces it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.urls import reverse

from billing import access
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.rules.pricing import PriceTerms
from billing.rules.usage_metadata import usage_records
from tests.api.conftest import ApiClient
from tests.api.test_api_remove_metered_price import LATER_EVENTS, NEXT_DAY, pay
from tests.api.test_api_several_metered_prices import send_events, two_meters
from tests.api.test_api_usage_billing import LAST_EVENTS, D
from tests.builders import fresh, make_account, make_user

pytestmark = pytest.mark.django_db

DEARER = PriceTerms("USD", unit_amount=Decimal(20))  # 20 cents a GB, where it was 10


def changed(write_api: ApiClient, sub, price_id: str, new_price_id: str) -> dict:
    answer = write_api.post(f"/subscriptions/{sub.sub_id}/items/{price_id}", {"price": new_price_id})
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_the_next_payment_bills_the_old_price_and_the_ones_after_it_the_new(read_api: ApiClient,
                                                                           write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    dearer = price_actions.add_price("API", DEARER, actor="test", meter="storage_gb")
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        body = changed(write_api, sub, storage.PriceId, dearer.PriceId)
        assert body["items"][1:] == [{"price": calls.PriceId},
                                     {"price": storage.PriceId, "ends_on": "2027-03-14"},
                                     {"price": dearer.PriceId, "starts_on": "2027-03-15"}]
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    # the storage of the period paid for at its old price, once: no line of the new one yet
    assert [(line["price"], line["quantity"]) for line in shown["lines"][1:]] == [
        (calls.PriceId, 1000), (calls.PriceId, 235), (storage.PriceId, 30)]
    charge = pay(sub, D)
    assert charge["amount"] == shown["amount_due"] == 999 + 47 + 300
    assert fresh(sub).metered_price_ids == [calls.PriceId, dearer.PriceId]
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):
        send_events(write_api, sub, LATER_EVENTS, prefix="later")
    later = usage_records(pay(sub, NEXT_DAY)["metadata"])
    # 40 GB at 20 cents: the new price, from its first day
    assert later[-1] == {"price": dearer.PriceId, "meter": "storage_gb", "quantity": "40", "amount": "800"}
    assert [e.Action for e in access.get_events_by_account(sub.account_id)].count(
        "subscription.metered_price_replaced") == 1


def test_what_cannot_replace_a_price_is_refused_and_nothing_written(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    dearer = price_actions.add_price("API", DEARER, actor="test", meter="storage_gb")
    path = f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}"
    version = fresh(sub).Version
    # a price of another meter, one billed already, one that is not there
    for price, words in [(calls.PriceId, "not storage_gb"), ("price_nope", "not a metered price")]:
        refused = write_api.post(path, {"price": price})
        assert refused.status_code == 400 and words in refused.json()["error"]["message"], refused.content
        assert refused.json()["error"]["param"] == "price"
    missing = write_api.post(f"/subscriptions/{sub.sub_id}/items/price_nope", {"price": dearer.PriceId})
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "price_id"
    assert fresh(sub).Version == version
    with time_machine.travel(LAST_EVENTS, tick=False):
        changed(write_api, sub, storage.PriceId, dearer.PriceId)
        # the old price cannot be kept while the new one replaces it (the meter would bill twice)
        kept = write_api.post(f"/subscriptions/{sub.sub_id}/items", {"price": storage.PriceId})
        assert kept.status_code == 400 and "replaced by" in kept.json()["error"]["message"], kept.content
        # the old one cannot be changed twice (its last day is set): nothing written
        again = write_api.post(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}", {"price": dearer.PriceId})
        assert again.status_code == 400 and "being removed already" in again.json()["error"]["message"]
        # the new one removed before it starts: it never bills, and the old one ends all the same
        write_api.delete(f"/subscriptions/{sub.sub_id}/items/{dearer.PriceId}")
    assert [r["meter"] for r in usage_records(pay(sub, D)["metadata"])] == ["api_calls", "storage_gb"]
    assert fresh(sub).metered_price_ids == [calls.PriceId]


def test_the_pages_say_when_the_new_price_starts(client, write_api: ApiClient) -> None:
    user = make_user("pat@example.com")
    sub, calls, storage = two_meters(make_account("pat@example.com", user_id=user.pk))
    dearer = price_actions.add_price("API", DEARER, actor="test", meter="storage_gb")
    staff = make_user("money@rpay.localhost", staff=True, money=True)
    url = reverse("admin:staff_change_metered", args=[sub.account_id, sub.sub_id])
    with time_machine.travel(LAST_EVENTS, tick=False):
        client.force_login(staff)
        page = client.get(url).content.decode()
        choice = f"{storage.PriceId} {dearer.PriceId}"
        assert choice in page and "2027-03-15" in page
        done = client.post(url, {"price": choice, "when": "period_end", "version": fresh(sub).Version})
        assert done.status_code == 302, done.content.decode()
        account = client.get(reverse("admin:staff_account", args=[sub.account_id])).content.decode()
        assert "$0.10 a unit a month, until 2027-03-14" in account
        assert "$0.20 a unit a month, from 2027-03-15" in account
        # the customer's usage page: the meter once, its price today, and the one to come
        client.force_login(user)
        usage = client.get(reverse("subscription_usage", args=[sub.sub_id]) + "?meter=storage_gb").content.decode()
    assert usage.count('href="?meter=storage_gb"') == 1
    assert 'data-testid="usage-replaced"' in usage and "$0.20 a unit a month" in usage
    assert "From 15 March 2027, this usage is billed at a new price" in usage
    assert [e.Actor for e in access.get_events_by_account(sub.account_id)
            if e.Action == "subscription.metered_price_replaced"] == ["money@rpay.localhost"]
    assert meter_actions.replacements(fresh(sub)) == []  # changed already: nothing more to offer
    assert date(2027, 3, 15).isoformat() == fresh(sub).metered_starts[dearer.PriceId]


def test_a_price_changed_now_bills_each_price_over_its_own_days_on_one_charge(
        read_api: ApiClient, write_api: ApiClient) -> None:
    # the storage (the period's highest reading) moves to 20 cents on 1 March: 30 GB read
    # that day at the old price, 25 GB on 10 March at the new one, both on D's charge
    sub, calls, storage = two_meters()
    dearer = price_actions.add_price("API", DEARER, actor="test", meter="storage_gb")
    with time_machine.travel(datetime(2027, 3, 1, 12, tzinfo=UTC), tick=False):
        answer = write_api.post(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}",
                                {"price": dearer.PriceId, "at": "now"})
        assert answer.status_code == 200, answer.content
        assert answer.json()["items"][2:] == [{"price": storage.PriceId, "ends_on": "2027-03-01"},
                                              {"price": dearer.PriceId, "starts_on": "2027-03-02"}]
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        send_events(write_api, sub, [("storage_gb", date(2027, 3, 10), 25)], prefix="later")
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert [(line["price"], line["quantity"], line["amount"] + line["tax"]) for line in shown["lines"][3:]] == [
        (storage.PriceId, 30, 300), (dearer.PriceId, 25, 500)]
    charge = pay(sub, D)
    assert charge["amount"] == shown["amount_due"] == 999 + 47 + 300 + 500
    assert [(r["price"], r["quantity"]) for r in usage_records(charge["metadata"])][1:] == [
        (storage.PriceId, "30"), (dearer.PriceId, "25")]
    # the charge's usage days are the period's, whichever price billed which
    assert (charge["metadata"]["usage_start"], charge["metadata"]["usage_end"]) == ("2027-02-15", "2027-03-15")
    assert fresh(sub).metered_price_ids == [calls.PriceId, dearer.PriceId]
