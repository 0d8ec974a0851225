# ruff: noqa: F811 - the fixture imported from its module
"""A plan switched to the usage alone of a metered price it does not bill by (Stripe: the
licensed item replaced by a metered one at the period's end): no fixed fee from its next
payment, and that price billing the meter's usage from that day on. A plan without a
metered price gains it; one billing the same meter by another price has that price
replaced (its usage through the last day paid billed at its own price); one billing other
meters keeps them. Each payment is what the upcoming payment said (docs/USAGE.md "Usage
alone of another metered price")."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.actions import switch as switch_actions
from billing.exceptions import ConditionFailed
from billing.models import MeterAggregation
from billing.operations import payments
from billing.rules.pricing import Interval, PriceTerms
from billing.rules.switch import usage_only
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.api.test_api_usage_alone import _event, _subscribe, metered  # noqa: F401 - the fixture
from tests.builders import PASSWORD, fresh, receipts_of

pytestmark = pytest.mark.django_db

SWITCHED = datetime(2027, 3, 1, 12, tzinfo=UTC)  # in the first period, 15 February to 14 March
NEXT, FOLLOWING = date(2027, 3, 15), date(2027, 4, 15)
# half a cent a call, every call: 1,000 calls cost $5.00
PER_CALL = PriceTerms("USD", unit_amount=Decimal("0.5"))


def _per_call(nickname: str = "per call", **more) -> object:
    return price_actions.add_price("API", PER_CALL, actor="test", nickname=nickname, meter="api_calls", **more)


def _pay(sub, day: date):
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        return payments.take_payment(fresh(sub), run_date=day)


def _plan_with_calls_switched_to(write_api: ApiClient, metered, price_id: str):
    """The plan with its graduated calls price, 1,500 calls used on 20 February, switched
    on 1 March to ``price_id``'s usage alone."""
    customer, graduated, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": fixed.PriceId}, {"price": graduated.PriceId}]})
    with time_machine.travel(SWITCHED, tick=False):
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 2, 20), 1500)).json()["status"] == "accepted"
        done = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": price_id})
    assert done.status_code == 200, done.content
    return sub


def _upcoming(read_api: ApiClient, sub, at: datetime) -> dict:
    with time_machine.travel(at, tick=False):
        return read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()


def test_a_plan_without_usage_pays_its_usage_alone_from_its_next_payment(
        metered, read_api: ApiClient, write_api: ApiClient, mailoutbox) -> None:
    customer, price, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"price": fixed.PriceId})  # the plan alone
    with time_machine.travel(SWITCHED, tick=False):
        # used while the plan is paid for: not the metered price's to bill
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 5000)).json()["status"] == "accepted"
        done = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": price.PriceId})
    assert done.status_code == 200, done.content
    # the API's item names the day it starts billing, as a replacing price's
    assert done.json()["amount"] == 0 and done.json()["items"] == [{"price": price.PriceId, "starts_on": "2027-03-15"}]
    [told] = [m for m in mailoutbox if "changes to" in m.body]
    assert ("from your next payment, on 15 March 2027. Until then you keep Developer API, which you have paid for. "
            "From then on there is no fixed fee: you pay for your usage alone.") in " ".join(told.body.split())
    after = fresh(sub)
    assert usage_only(after) and after.PriceId is None and after.MeteredPriceId == price.PriceId
    assert after.metered_starts == {price.PriceId: NEXT.isoformat()} and after.metered_ends == {}
    # the next payment: the plan's period was paid, its usage is none of this price's
    assert _upcoming(read_api, sub, datetime(2027, 3, 14, 20, tzinfo=UTC))["amount_due"] == 0
    first = _pay(sub, NEXT)
    assert first.status == "paid" and first.amount == 0, first.reason
    with time_machine.travel(datetime(2027, 4, 14, 20, tzinfo=UTC), tick=False):
        for n, (day, value) in enumerate([(date(2027, 3, 15), 1000), (date(2027, 4, 14), 235)], start=2):
            assert write_api.post("/meter_events", _event(sub, n, day, value)).json()["status"] == "accepted"
    shown = _upcoming(read_api, sub, datetime(2027, 4, 14, 21, tzinfo=UTC))
    second = _pay(sub, FOLLOWING)
    assert second.status == "paid" and second.amount == shown["amount_due"] == 47  # 235 calls past 1,000 free
    assert [c["amount"] for c in get_gateway().charges_made(sub_id=sub.sub_id)] == [999, 47]


def test_a_plan_s_own_price_of_the_meter_is_replaced_at_the_period_s_end(
        metered, read_api: ApiClient, write_api: ApiClient) -> None:
    _customer, graduated, _fixed = metered
    per_call = _per_call()
    sub = _plan_with_calls_switched_to(write_api, metered, per_call.PriceId)
    after = fresh(sub)
    assert usage_only(after) and after.metered_price_ids == [per_call.PriceId, graduated.PriceId]
    assert after.metered_ends == {graduated.PriceId: "2027-03-14"}
    assert after.metered_starts == {per_call.PriceId: NEXT.isoformat()}
    # the plan's period's usage at the plan's metered price, and no fee: 500 calls × 0.2 cents
    shown = _upcoming(read_api, sub, datetime(2027, 3, 14, 20, tzinfo=UTC))
    first = _pay(sub, NEXT)
    assert first.amount == shown["amount_due"] == 100, first.reason
    with time_machine.travel(datetime(2027, 4, 1, tzinfo=UTC), tick=False):
        assert write_api.post("/meter_events", _event(sub, 2, date(2027, 3, 20), 1000)).json()["status"] == "accepted"
    shown = _upcoming(read_api, sub, datetime(2027, 4, 14, 20, tzinfo=UTC))
    second = _pay(sub, FOLLOWING)
    assert second.amount == shown["amount_due"] == 500  # every call at half a cent
    assert fresh(sub).metered_price_ids == [per_call.PriceId]  # the replaced price gone once billed
    assert [c["amount"] for c in get_gateway().charges_made(sub_id=sub.sub_id)] == [999, 100, 500]


def test_a_plan_s_metered_prices_of_other_meters_bill_on(metered, write_api: ApiClient) -> None:
    _customer, graduated, _fixed = metered
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    storage = price_actions.add_price("API", PER_CALL, actor="test", nickname="storage", meter="storage_gb")
    sub = _plan_with_calls_switched_to(write_api, metered, storage.PriceId)
    after = fresh(sub)
    assert after.metered_price_ids == [storage.PriceId, graduated.PriceId] and after.metered_ends == {}
    assert _pay(sub, NEXT).amount == 100  # the calls' usage of the period, no fee, no storage yet
    with time_machine.travel(datetime(2027, 4, 1, tzinfo=UTC), tick=False):
        assert write_api.post("/meter_events", _event(sub, 2, date(2027, 3, 20), 1200)).json()["status"] == "accepted"
        stored = {**_event(sub, 3, date(2027, 3, 21), 40), "event_name": "storage_gb"}
        assert write_api.post("/meter_events", stored).json()["status"] == "accepted"
    # 200 calls past 1,000 free (40 cents) and 40 GB at half a cent (20 cents)
    assert _pay(sub, FOLLOWING).amount == 60


def test_the_refusals_say_why(metered, write_api: ApiClient) -> None:
    customer, graduated, fixed = metered
    yearly = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal("0.5"), interval=Interval.YEAR),
                                     actor="test", meter="api_calls")
    _body, plan = _subscribe(write_api, customer, {"price": fixed.PriceId})
    with time_machine.travel(SWITCHED, tick=False):
        refused = write_api.post(f"/subscriptions/{plan.sub_id}/switch", {"price": yearly.PriceId})
    assert error_of(refused)["message"] == "That metered price is billed over other periods than the subscription's."
    per_call = _per_call()
    with time_machine.travel(SWITCHED, tick=False):
        assert write_api.post(f"/subscriptions/{plan.sub_id}/switch", {"price": graduated.PriceId}).status_code == 200
        again = write_api.post(f"/subscriptions/{plan.sub_id}/switch", {"price": per_call.PriceId})
    assert error_of(again)["message"] == ("The subscription pays for its usage alone already: add or change its "
                                          "metered prices instead.")
    assert fresh(plan).metered_price_ids == [graduated.PriceId]


def test_a_change_of_metered_prices_since_the_quote_refuses_the_switch_and_writes_nothing(metered, write_api) -> None:
    """The switch rewrites the metered prices it read: one attached meanwhile is never
    lost (the write is on the version read)."""
    customer, graduated, fixed = metered
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    storage = price_actions.add_price("API", PER_CALL, actor="test", nickname="storage", meter="storage_gb")
    _body, sub = _subscribe(write_api, customer, {"price": fixed.PriceId})
    stale = fresh(sub)
    with time_machine.travel(SWITCHED, tick=False):
        meter_actions.attach_metered_price(fresh(sub), storage.PriceId, actor="test")
        with pytest.raises(ConditionFailed):
            switch_actions.switch(stale, graduated.PriceId, today=date(2027, 3, 1), actor="test")
    after = fresh(sub)
    assert after.metered_price_ids == [storage.PriceId] and int(after.PaymentAmount) == 999


def test_the_portal_offers_a_plan_another_price_s_usage_alone_in_words(metered, write_api: ApiClient) -> None:
    customer, graduated, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"price": fixed.PriceId})
    with time_machine.travel(SWITCHED, tick=False):
        customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/switch/")
        choices = dict(page.context["form"].fields["sku"].choices)
        words = "first 1,000 units free, then $0.002 a unit, a month"
        assert choices[graduated.PriceId] == (f"Developer API — your usage alone ({words}), no fixed fee "
                                              "(from your next payment)")
        confirm = customer.client.post(f"/subscriptions/{sub.sub_id}/switch/", {"sku": graduated.PriceId})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and f"No fixed fee: you pay for your usage, {words}" in html, html[:600]
    assert len(receipts_of(sub)) == 1 and access.get_price(graduated.PriceId) is not None


def test_usage_alone_has_no_seats_to_change(metered, write_api: ApiClient) -> None:
    customer, graduated, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": graduated.PriceId}]})
    with time_machine.travel(SWITCHED, tick=False):
        refused = write_api.post(f"/subscriptions/{sub.sub_id}/quantity", {"quantity": 3})
        customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert refused.status_code == 409, refused.content
    assert error_of(refused)["message"] == "A subscription to usage alone has no seats: it pays for its usage."
    assert 'data-testid="change-seats"' not in page and fresh(sub).Quantity is None


def test_the_switch_page_reads_each_metered_price_once_however_many_are_offered(
        metered, write_api: ApiClient, ddb_requests) -> None:
    """The prices offered come with the catalogue's Query; the plan's own metered prices
    are read once for all of them, never once per price offered."""
    customer, _graduated, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"price": fixed.PriceId})

    def page_reads() -> int:
        with time_machine.travel(SWITCHED, tick=False):
            customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})
            ddb_requests.reset()
            page = customer.client.get(f"/subscriptions/{sub.sub_id}/switch/")
        assert page.status_code == 200
        return ddb_requests.by_name()["GetItem"]

    one_offered = page_reads()
    for n in range(3):
        _per_call(nickname=f"per call {n}")
    assert page_reads() == one_offered
