"""A metered price removed from a subscription at its period's end (docs/USAGE.md "Removing
a metered price"), as Stripe deletes a metered item and bills its usage on the next
invoice: the next payment bills its usage through the last day paid for, with the other
items, one charge and one invoice; no payment after it bills any. Until that payment it
can be kept (added again). The price a subscription to usage alone is to cannot be
removed (the subscription is switched or cancelled instead)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.urls import reverse

from billing import access
from billing.access.usage_billing import NotMetered
from billing.actions import meters as meter_actions
from billing.models import SubscriptionStatus
from billing.operations import payments
from billing.operations.final_usage import bill_final_usage
from billing.rules.usage_metadata import usage_records
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.api.test_api_several_metered_prices import EVENTS, send_events, two_meters
from tests.api.test_api_usage_billing import LAST_EVENTS, D
from tests.builders import card, fresh, make_account, make_user, receipts_of

pytestmark = pytest.mark.django_db

NEXT_DAY = date(2027, 4, 15)  # the payment after D: the usage of 15 March to 14 April
# after D's payment, in the period it began: a meter removed is no longer billed for it
LATER_EVENTS = [("api_calls", date(2027, 3, 20), 1500), ("storage_gb", date(2027, 3, 20), 40)]


def removed(write_api: ApiClient, sub, price_id: str):
    answer = write_api.delete(f"/subscriptions/{sub.sub_id}/items/{price_id}")
    assert answer.status_code == 200, answer.content
    return answer.json()


def pay(sub, day: date) -> dict:
    """``sub``'s payment taken on ``day`` (at noon UTC), and the charge it made."""
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=day)
    assert outcome.status == "paid", outcome.reason
    return get_gateway().charges_made(sub_id=sub.sub_id)[-1]


def test_a_removed_price_bills_its_usage_through_the_period_paid_then_nothing(
        read_api: ApiClient, write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        body = removed(write_api, sub, storage.PriceId)
        # the item says until when it bills: the last day paid for
        assert body["items"][1:] == [{"price": calls.PriceId}, {"price": storage.PriceId, "ends_on": "2027-03-14"}]
        # the merchant hears of it: subscription.updated, carrying the items as the API shows them
        updates = [e for e in access.events_after(None, limit=1000)[0]
                   if e.Type == "subscription.updated" and e.ObjectId == sub.sub_id]
        assert updates[-1].Data["items"] == body["items"]
        # a second removal changes nothing; one replayed by its Idempotency-Key answers alike
        version = fresh(sub).Version
        assert removed(write_api, sub, storage.PriceId)["items"] == body["items"]
        replayed = write_api.delete(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}", key="remove-1")
        assert write_api.delete(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}", key="remove-1").json() == \
            replayed.json()
        assert fresh(sub).Version == version
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    # the next payment still bills the storage of the period paid for, as the upcoming payment says
    assert [(line["meter"], line["quantity"]) for line in shown["lines"][1:]] == [
        ("api_calls", 1000), ("api_calls", 235), ("storage_gb", 30)]
    charge = pay(sub, D)
    assert charge["amount"] == shown["amount_due"] == 999 + 47 + 300
    assert [r["meter"] for r in usage_records(charge["metadata"])] == ["api_calls", "storage_gb"]
    # then it is gone: from the subscription, its items, and the payment after
    assert fresh(sub).metered_price_ids == [calls.PriceId]
    assert [item["price"] for item in read_api.get(f"/subscriptions/{sub.sub_id}").json()["items"]][1:] == [
        calls.PriceId]
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):
        # the storage used after its last day is still accepted (events belong to the
        # customer, not to a price) and never billed
        send_events(write_api, sub, LATER_EVENTS, prefix="later")
    later = pay(sub, NEXT_DAY)
    assert usage_records(later["metadata"]) == [
        {"price": calls.PriceId, "meter": "api_calls", "quantity": "1500", "amount": "100"}]
    assert later["amount"] == 999 + 100
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [999 + 100, 999 + 47 + 300]


def test_a_price_removed_now_bills_its_usage_through_today(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(datetime(2027, 2, 20, 12, tzinfo=UTC), tick=False):
        send_events(write_api, sub, [("storage_gb", date(2027, 2, 20), 12)], prefix="early")
        body = removed(write_api, sub, f"{storage.PriceId}?at=now")
        assert body["items"][-1] == {"price": storage.PriceId, "ends_on": "2027-02-20"}
        # removed at the period's end after it: it ends today all the same (the earlier day holds)
        assert removed(write_api, sub, storage.PriceId)["items"][-1]["ends_on"] == "2027-02-20"
        refused = write_api.delete(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}?at=tomorrow")
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "at", refused.content
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)  # the storage of 1 March is after its last day
    records = usage_records(pay(sub, D)["metadata"])
    # the storage's highest reading through 20 February, none after
    assert records[-1] == {"price": storage.PriceId, "meter": "storage_gb", "quantity": "12", "amount": "120"}
    assert fresh(sub).metered_price_ids == [calls.PriceId]


def test_a_price_removed_is_kept_when_added_again_before_its_period_ends(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        removed(write_api, sub, storage.PriceId)
        again = write_api.post(f"/subscriptions/{sub.sub_id}/items", {"price": storage.PriceId})
    assert again.status_code == 200, again.content
    assert again.json()["items"][1:] == [{"price": calls.PriceId}, {"price": storage.PriceId}]
    pay(sub, D)
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):
        send_events(write_api, sub, LATER_EVENTS, prefix="later")
    # still billed after the period it was to end with
    assert [r["meter"] for r in usage_records(pay(sub, NEXT_DAY)["metadata"])] == ["api_calls", "storage_gb"]
    actions = [e.Action for e in access.get_events_by_account(sub.account_id)]
    assert actions.count("subscription.metered_price_removed") == 1
    assert actions.count("subscription.metered_price_kept") == 1


def test_removing_the_first_metered_price_leaves_the_others_billing(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        removed(write_api, sub, calls.PriceId)
    assert [r["meter"] for r in usage_records(pay(sub, D)["metadata"])] == ["api_calls", "storage_gb"]
    assert fresh(sub).metered_price_ids == [storage.PriceId]
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):
        send_events(write_api, sub, LATER_EVENTS, prefix="later")
    assert usage_records(pay(sub, NEXT_DAY)["metadata"]) == [
        {"price": storage.PriceId, "meter": "storage_gb", "quantity": "40", "amount": "400"}]
    # the next write drops the gone price from the item: the one left is its first
    with time_machine.travel(datetime(2027, 4, 16, tzinfo=UTC), tick=False):
        kept = meter_actions.attach_metered_price(fresh(sub), calls.PriceId, actor="test")
    assert (kept.MeteredPriceId, kept.OtherMeteredPriceIds, kept.MeteredPriceEnds) == (
        storage.PriceId, [calls.PriceId], None)
    assert fresh(sub).listed_metered_price_ids == [storage.PriceId, calls.PriceId]


def test_a_cancel_bills_a_removed_price_s_usage_through_its_last_day(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        meter_actions.remove_metered_price(fresh(sub), storage.PriceId, actor="test")
        done = bill_final_usage(fresh(sub), last_day=date(2027, 3, 14), actor="test")
    assert done.receipt is not None
    assert done.receipt.ProcessedAmount == 47 + 300


def test_what_cannot_be_removed_is_refused_and_nothing_written(write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    answer = write_api.delete(f"/subscriptions/{sub.sub_id}/items/price_nope")
    assert answer.status_code == 404 and answer.json()["error"]["param"] == "price_id"
    # a subscription to usage alone cannot lose the price it is to
    access.add_card(sub.account_id, card(), "1 Main St", actor="test", make_default=True)
    started = write_api.post("/subscriptions", {"customer": sub.account_id, "items": [{"price": calls.PriceId}]})
    assert started.status_code == 201, started.content
    plan = started.json()["id"]
    refused = write_api.delete(f"/subscriptions/{plan}/items/{calls.PriceId}")
    assert refused.status_code == 400 and "switch or cancel" in refused.json()["error"]["message"]
    # an ended subscription bills nothing more
    ended = access.cancel_subscription(fresh(sub), actor="test")
    assert ended.Status == SubscriptionStatus.CANCELLED
    gone = write_api.delete(f"/subscriptions/{sub.sub_id}/items/{storage.PriceId}")
    assert gone.status_code == 409
    with pytest.raises(NotMetered, match="ended"):
        meter_actions.remove_metered_price(fresh(sub), storage.PriceId, actor="test")
    assert fresh(sub).MeteredPriceEnds is None


def test_the_money_role_removes_one_and_the_pages_say_until_when(client, write_api: ApiClient) -> None:
    sub, calls, storage = two_meters()
    staff = make_user("money@rpay.localhost", staff=True, money=True)
    url = reverse("admin:staff_remove_metered", args=[sub.account_id, sub.sub_id])
    with time_machine.travel(LAST_EVENTS, tick=False):
        client.force_login(staff)
        page = client.get(url).content.decode()
        assert calls.PriceId in page and storage.PriceId in page and "2027-03-14" in page
        assert "The last day paid for, 2027-03-14" in page
        done = client.post(url, {"price": storage.PriceId, "when": "period_end", "version": fresh(sub).Version})
        assert done.status_code == 302, done.content.decode()
        assert fresh(sub).metered_ends == {storage.PriceId: "2027-03-14"}
        account = client.get(reverse("admin:staff_account", args=[sub.account_id])).content.decode()
        assert "until 2027-03-14" in account
        # the one being removed is no longer offered for removal, and is offered to keep
        assert storage.PriceId not in client.get(url).content.decode()
        offered = client.get(reverse("admin:staff_add_metered", args=[sub.account_id, sub.sub_id])).content.decode()
        assert storage.PriceId in offered
    assert [e.Actor for e in access.get_events_by_account(sub.account_id)
            if e.Action == "subscription.metered_price_removed"] == ["money@rpay.localhost"]


def test_the_customer_s_usage_page_says_a_removed_meter_ends(client, write_api: ApiClient) -> None:
    user = make_user("pat@example.com")
    sub, calls, storage = two_meters(make_account("pat@example.com", user_id=user.pk))
    url = reverse("subscription_usage", args=[sub.sub_id])
    with time_machine.travel(LAST_EVENTS, tick=False):
        client.force_login(user)
        send_events(write_api, sub, EVENTS)
        assert 'data-testid="usage-ends"' not in client.get(f"{url}?meter=storage_gb").content.decode()
        meter_actions.remove_metered_price(fresh(sub), storage.PriceId, actor="test")
        page = client.get(f"{url}?meter=storage_gb").content.decode()
        assert 'data-testid="usage-ends"' in page and "no longer billed after 14 March 2027" in page
        # its usage so far is still the estimate's: the next payment bills it
        assert "So far: 30 storage_gb" in page
        assert 'data-testid="usage-ends"' not in client.get(f"{url}?meter=api_calls").content.decode()
        # the subscription page names it with its last day
        shown = client.get(reverse("subscription", args=[sub.sub_id])).content.decode()
        assert "; $0.10 a unit a month, until 14 March 2027\n" in shown, shown


def test_a_removal_reads_the_subscription_and_writes_one_transaction(write_api: ApiClient, ddb_requests) -> None:
    sub, calls, storage = two_meters()
    write_api.get("/products")  # the key's first use is written once
    ddb_requests.reset()
    with time_machine.travel(LAST_EVENTS, tick=False):
        removed(write_api, sub, storage.PriceId)
    # the key and its rate counter (GetItem, UpdateItem) as every call, the key's last use
    # (UpdateItem: written at most once a minute, and the clock moved on), the id's look-up
    # item and the subscription's Query; then the subscription, its audit event and the merchant's event in one
    # transaction: no price is read
    assert ddb_requests.by_name() == Counter({"GetItem": 2, "UpdateItem": 2, "Query": 1, "TransactWriteItems": 1})


def test_the_first_price_removed_now_leaves_the_receipt_s_usage_days_the_period_s(write_api: ApiClient) -> None:
    # the calls (the first metered price) removed on 20 February, the storage billed on:
    # the charge's usage days are the period's, from the first day any usage bills to the
    # last, not the calls' few
    sub, calls, storage = two_meters()
    with time_machine.travel(datetime(2027, 2, 20, 12, tzinfo=UTC), tick=False):
        removed(write_api, sub, f"{calls.PriceId}?at=now")
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        coming = payments.next_charge(fresh(sub))
    assert coming.usage_last_day == date(2027, 3, 14)  # what the reminder and the page say
    charge = pay(sub, D)
    assert (charge["metadata"]["usage_start"], charge["metadata"]["usage_end"]) == ("2027-02-15", "2027-03-15")
    # the calls of 15 to 20 February only (200), all within the free 1,000
    assert [(r["meter"], r["quantity"]) for r in usage_records(charge["metadata"])] == [
        ("api_calls", "200"), ("storage_gb", "30")]
    [receipt] = [r for r in receipts_of(sub) if r.UsageStart]
    assert (receipt.UsageStart, receipt.UsageEnd) == ("2027-02-15", "2027-03-15")


def test_a_price_being_removed_cannot_be_kept_alone(write_api: ApiClient) -> None:
    # a plan's switch to its own metered price keeps that usage alone; one on its way out
    # would leave a subscription that bills nothing: refused, nothing charged or written
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        removed(write_api, sub, calls.PriceId)
        version = fresh(sub).Version
        refused = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": calls.PriceId})
    assert refused.status_code in (400, 409), refused.content
    assert refused.json()["error"]["message"] == (
        "That metered price is being removed: add it again first to keep it alone.")
    assert fresh(sub).Version == version and get_gateway().charges_made(sub_id=sub.sub_id) == []
