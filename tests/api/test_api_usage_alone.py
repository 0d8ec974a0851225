"""A metered price subscribed to alone (Stripe's subscription whose one item is metered):
no fixed fee; the first payment is a receipt of 0 and no charge; each later payment charges
the usage of the period just ended, as the upcoming payment read after the last event said,
its invoice the usage's lines only; a period without usage records a receipt of 0 and
charges nothing; the subscription cannot switch price (a second item it cannot hold yet)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access.usage import USAGE_SHARDS
from billing.actions import lifecycle
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.operations import payments
from billing.rules.invoice import invoice_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.rules.switch import usage_only
from billing.staff.account_page import price_lines
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.builders import PASSWORD, card, fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

SUBSCRIBED = datetime(2027, 2, 15, 9, tzinfo=UTC)  # pays on the 15th: the first period to 14 March
LAST_EVENTS = datetime(2027, 3, 14, 20, tzinfo=UTC)
PAY_DAY = date(2027, 3, 15)
# the first 1,000 calls free, then 0.2 cents: 1,235 calls cost 235 x 0.2 = 47 cents
GRADUATED = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                       tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"))))


@pytest.fixture
def metered(db, moto_table):
    customer = make_customer("builder@example.com")
    access.add_card(customer.account_id, card(), "1 Main St", actor="test", make_default=True)
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    fixed = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(999)), actor="test")
    price = price_actions.add_price("API", GRADUATED, actor="test", nickname="pay as you go", meter="api_calls")
    return customer, price, fixed


def _subscribe(write_api: ApiClient, customer, body: dict) -> tuple[dict, object]:
    with time_machine.travel(SUBSCRIBED, tick=False):
        response = write_api.post("/subscriptions", {"customer": customer.account_id, **body})
    assert response.status_code == 201, response.content
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    return response.json(), sub


def _event(sub, n: int, day: date, value: int) -> dict:
    at = int(datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp())
    return {"event_name": "api_calls", "customer": sub.account_id, "identifier": f"e{n}", "value": value,
            "timestamp": at}


def test_usage_alone_pays_nothing_first_then_its_usage_as_estimated(
        metered, read_api: ApiClient, write_api: ApiClient, ddb_requests) -> None:
    customer, price, _fixed = metered
    body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    assert (body["amount"], body["items"], body["currency"]) == (0, [{"price": price.PriceId}], "USD")
    assert usage_only(sub) and sub.MeteredPriceId == price.PriceId and sub.PriceId is None
    # the first payment: a receipt of 0 for the first period, nothing charged
    [first] = receipts_of(sub)
    assert int(first.ProcessedAmount) == 0 and not first.ChargeId
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    assert fresh(sub).PaidThroughDate == "2027-03-14" and fresh(sub).NextPaymentDate == PAY_DAY.isoformat()

    with time_machine.travel(LAST_EVENTS, tick=False):
        for n, (day, value) in enumerate([(date(2027, 2, 16), 1000), (date(2027, 3, 14), 235)]):
            assert write_api.post("/meter_events", _event(sub, n, day, value)).json()["status"] == "accepted"
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    # no fixed fee's line: the usage's, a tier a line
    assert [(line["meter"], line["quantity"]) for line in shown["lines"]] == [("api_calls", 1000), ("api_calls", 235)]
    assert shown["amount_due"] == 47 == sum(line["amount"] + line["tax"] for line in shown["lines"])

    due = fresh(sub)
    ddb_requests.reset()
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(due, run_date=PAY_DAY)
    assert outcome.status == "paid", outcome.reason
    # as a fixed price's payment with a metered price (tests/api/test_api_usage_billing.py):
    # the seller's profile, the price's and the meter's GetItems, the period closed (an
    # UpdateItem per usage shard) and read (one Query), the receipt's transaction, the advance
    assert ddb_requests.by_name() == Counter({"GetItem": 3, "UpdateItem": 1 + USAGE_SHARDS, "Query": 1,
                                              "TransactWriteItems": 1})
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    paid = next(r for r in receipts_of(sub) if r.ChargeId)
    assert charge["amount"] == int(paid.ProcessedAmount) == shown["amount_due"]
    document = invoice_of(paid)
    assert document is not None
    assert [line.description for line in document.lines] == ["api_calls: 1,000 units free",
                                                            "api_calls: 235 units × $0.002"]
    assert sum(line.gross for line in document.lines) == 47


def test_a_period_without_usage_records_a_receipt_of_0_and_charges_nothing(
        metered, write_api: ApiClient) -> None:
    customer, price, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"price": price.PriceId})  # the flat form
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=PAY_DAY)
    assert outcome.status == "paid" and outcome.amount == 0, outcome.reason
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    assert sorted(int(r.ProcessedAmount) for r in receipts_of(sub)) == [0, 0]
    assert fresh(sub).NextPaymentDate == "2027-04-15"


def test_usage_alone_refusals(metered, write_api: ApiClient) -> None:
    customer, price, fixed = metered
    with time_machine.travel(SUBSCRIBED, tick=False):
        quantity = write_api.post("/subscriptions", {"customer": customer.account_id, "price": price.PriceId,
                                                     "quantity": 2})
        both = write_api.post("/subscriptions", {"customer": customer.account_id, "price": fixed.PriceId,
                                                 "items": [{"price": price.PriceId}]})
    assert quantity.status_code == 400 and error_of(quantity)["param"] == "quantity"
    assert both.status_code == 400 and error_of(both)["param"] == "items"
    assert access.get_subscriptions_by_account(customer.account_id) == []
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    access.create_product("PHOTO", "Photo editor", 500, "USD")
    other = price_actions.add_price("PHOTO", PriceTerms("USD", unit_amount=Decimal(500)), actor="test")
    with time_machine.travel(SUBSCRIBED, tick=False):
        switch = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": other.PriceId})
    assert switch.status_code in (400, 409) and "usage alone" in error_of(switch)["message"], switch.content
    assert usage_only(fresh(sub)) and get_gateway().charges_made(sub_id=sub.sub_id) == []
    # a coupon discounts a fixed fee: none here (usage is never discounted), nothing written
    access.create_coupon("TENOFF", actor="staff", percent_off=10, duration="forever")
    with time_machine.travel(SUBSCRIBED, tick=False):
        coupon = write_api.post(f"/subscriptions/{sub.sub_id}/coupon", {"code": "TENOFF"})
    assert coupon.status_code == 400 and error_of(coupon)["param"] == "code", coupon.content
    assert "this subscription has none, only its usage" in error_of(coupon)["message"]
    assert fresh(sub).CouponCode is None and int(access.get_coupon("TENOFF").Uses or 0) == 0


def test_usage_alone_adds_a_fixed_price_of_its_product_and_keeps_billing_its_usage(
        metered, read_api: ApiClient, write_api: ApiClient) -> None:
    """From pay-as-you-go to a plan: a fixed price of the same product joins the metered
    one, charged now for the days left of the period (nothing paid to credit), and the next
    payment is the plan's fee and the usage of the period, as announced."""
    customer, price, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    with time_machine.travel(datetime(2027, 3, 1, 12, tzinfo=UTC), tick=False):
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 2, 20), 1500)).json()["status"] == "accepted"
        done = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": fixed.PriceId})
        assert done.status_code == 200, done.content
        assert done.json()["items"] == [{"price": fixed.PriceId, "quantity": 1}, {"price": price.PriceId}]
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    # 1 to 14 March of $9.99 a month: 14 of February-March's 28 days, half of 999 rounded half up
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert (charge["amount"], charge["metadata"]["kind"]) == (500, "switch")
    assert not usage_only(fresh(sub)) and fresh(sub).MeteredPriceId == price.PriceId
    # the plan's fee and 500 calls past the free 1,000 at 0.2 cents
    assert shown["amount_due"] == 999 + 100
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=PAY_DAY)
    assert outcome.status == "paid" and outcome.amount == shown["amount_due"]


def test_the_portal_and_the_e_mails_say_usage_alone(metered, write_api: ApiClient, mailoutbox) -> None:
    customer, price, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    with time_machine.travel(SUBSCRIBED, tick=False):
        customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})  # a session of that day
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert "No fixed fee: you pay for your usage" in page and 'data-testid="usage"' in page
    assert "$0.00 a month" not in page
    with time_machine.travel(SUBSCRIBED, tick=False):
        switch_page = customer.client.get(f"/subscriptions/{sub.sub_id}/switch/")
    assert switch_page.status_code == 200 and "Developer API" in switch_page.content.decode()
    confirmed, = (m for m in mailoutbox if "confirmed" in m.subject)
    assert "No fixed fee: you pay for your usage" in confirmed.body
    receipt, = (m for m in mailoutbox if m.subject.startswith("Invoice"))
    assert "it has no fixed fee" in receipt.body and "discount" not in receipt.body
    # the staff account page names its one price, the metered one's words
    [words] = price_lines([fresh(sub)])[sub.sub_id]
    assert words == "first 1,000 units free, then $0.002 a unit, a month"


def test_a_cancel_now_bills_the_open_period_s_usage_and_refunds_nothing(metered, write_api: ApiClient) -> None:
    customer, price, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    with time_machine.travel(LAST_EVENTS, tick=False):
        for n, (day, value) in enumerate([(date(2027, 2, 20), 1100), (date(2027, 3, 1), 100)]):
            assert write_api.post("/meter_events", _event(sub, n, day, value)).json()["status"] == "accepted"
    with time_machine.travel(datetime(2027, 3, 2, 12, tzinfo=UTC), tick=False):
        lifecycle.cancel_now(fresh(sub), today=date(2027, 3, 2), actor="customer", reason="too_expensive")
    # 1,200 calls: 200 past the free 1,000 at 0.2 cents, 40 cents in one charge of the usage
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == 40 and charge["metadata"]["kind"] == "usage"
    assert sorted(int(r.ProcessedAmount) for r in receipts_of(sub)) == [0, 40]
    assert not any(r.RefundedAmount for r in receipts_of(sub))


def test_the_subscription_s_own_write_refuses_a_coupon_on_usage_alone(metered) -> None:
    """The last guard, whoever calls it: nothing written, the coupon's use not counted."""
    customer, price, _fixed = metered
    access.create_coupon("TENOFF", actor="staff", percent_off=10, duration="forever")
    with pytest.raises(access.CouponRefused) as refused:
        access.create_subscription(access.get_account(customer.account_id), sku="API", payment_day=15, amount=0,
                                   currency="USD", card=card(), today=date(2027, 2, 15), reminder_days_before=7,
                                   coupon=access.get_coupon("TENOFF"), metered_price_id=price.PriceId)
    assert refused.value.reason == "no_fixed_fee"
    assert access.get_subscriptions_by_account(customer.account_id) == []
    assert int(access.get_coupon("TENOFF").Uses or 0) == 0


def test_a_plan_goes_back_to_usage_alone_from_its_next_payment(
        metered, read_api: ApiClient, write_api: ApiClient) -> None:
    """A plan's fee with its metered price switched to the metered price alone: a lower
    price, so from the next payment (the period paid is kept); that payment bills the
    period's usage and no fee, as the upcoming payment says."""
    customer, price, fixed = metered
    body, sub = _subscribe(write_api, customer, {"items": [{"price": fixed.PriceId}, {"price": price.PriceId}]})
    assert body["items"] == [{"price": fixed.PriceId, "quantity": 1}, {"price": price.PriceId}]
    with time_machine.travel(datetime(2027, 3, 1, 12, tzinfo=UTC), tick=False):
        assert write_api.post("/meter_events", _event(sub, 1, date(2027, 2, 20), 1500)).json()["status"] == "accepted"
        done = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": price.PriceId})
        assert done.status_code == 200, done.content
        assert done.json()["items"] == [{"price": price.PriceId}] and done.json()["amount"] == 0
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
        again = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": price.PriceId})
    assert again.status_code in (400, 409)  # already its price
    assert usage_only(fresh(sub)) and fresh(sub).PriceId is None
    assert [c["amount"] for c in get_gateway().charges_made(sub_id=sub.sub_id)] == [999]  # the first fee only
    # 500 calls past the free 1,000 at 0.2 cents, and no fee
    assert shown["amount_due"] == 100 and all(line["meter"] == "api_calls" for line in shown["lines"])
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=PAY_DAY)
    assert outcome.status == "paid" and outcome.amount == 100


def test_the_portal_offers_a_plan_its_own_usage_alone(metered, write_api: ApiClient) -> None:
    customer, price, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": fixed.PriceId}, {"price": price.PriceId}]})
    with time_machine.travel(datetime(2027, 3, 1, 12, tzinfo=UTC), tick=False):
        customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/switch/")
        choices = dict(page.context["form"].fields["sku"].choices)
        assert choices[price.PriceId] == "Developer API — your usage alone, no fixed fee (from your next payment)"
        confirm = customer.client.post(f"/subscriptions/{sub.sub_id}/switch/", {"sku": price.PriceId})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "No fixed fee: you pay for your usage" in html, html[:400]
    assert 'data-testid="next-payment"' not in html  # the usage is not known yet: no amount announced
