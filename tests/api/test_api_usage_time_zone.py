"""Usage counted by the billing calendar's days (docs/USAGE.md "Days of the billing time
zone"): with ``BILLING_TIMEZONE`` east of UTC (Tokyo, UTC+9), an event is billed with the
period its local day is in, and an event sent after the payment run on the payment day's
first hours (still the day before in UTC) is counted for the new period, not refused as
billed. The upcoming payment read after the last event is what the payment day charges."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.operations import payments
from billing.rules.pricing import PriceTerms
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.builders import card, fresh, make_account, make_subscription, receipts_of

pytestmark = pytest.mark.django_db

D = date(2027, 3, 15)  # Tokyo's payment day: pays 15 March to 14 April, and the usage of 15 February to 14 March
SENT = datetime(2027, 3, 14, 20, 30, tzinfo=UTC)  # 15 March 05:30 in Tokyo, before the run
RUN = datetime(2027, 3, 14, 22, tzinfo=UTC)  # 15 March 07:00 in Tokyo: the payment run
AFTER_RUN = datetime(2027, 3, 14, 23, tzinfo=UTC)  # 15 March 08:00 in Tokyo; still 14 March in UTC


def _at(moment: datetime) -> int:
    return int(moment.timestamp())


# (identifier, UTC moment, value): the first two are of Tokyo's 15 February to 14 March,
# the third of Tokyo's 15 March (14 March in UTC)
EVENTS = [
    ("first-local-hour", datetime(2027, 2, 14, 15, 30, tzinfo=UTC), 200),  # 15 Feb 00:30 in Tokyo
    ("last-local-hour", datetime(2027, 3, 14, 14, 30, tzinfo=UTC), 35),  # 14 Mar 23:30 in Tokyo
    ("next-period", datetime(2027, 3, 14, 20, tzinfo=UTC), 1000),  # 15 Mar 05:00 in Tokyo
]


@pytest.fixture
def tokyo(settings):
    settings.BILLING_TIMEZONE = "Asia/Tokyo"


def _metered_subscription():
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    # half a cent a call
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount="0.5"), actor="test", meter="api_calls")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15), next_reminder=date(2027, 3, 8),
                              last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price.PriceId, actor="test")


def _event(sub, identifier: str, moment: datetime, value: int) -> dict:
    return {"event_name": "api_calls", "customer": sub.account_id, "identifier": identifier, "value": value,
            "timestamp": _at(moment)}


def test_an_event_is_billed_with_the_period_of_its_day_in_the_billing_time_zone(
        tokyo, read_api: ApiClient, write_api: ApiClient) -> None:
    sub = _metered_subscription()
    with time_machine.travel(SENT, tick=False):
        for identifier, moment, value in EVENTS:
            answer = write_api.post("/meter_events", _event(sub, identifier, moment, value)).json()
            assert answer["status"] == "accepted", answer
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    [_fee, used] = shown["lines"]
    assert used["quantity"] == 235  # 200 + 35: the 1,000 of 15 March (Tokyo) are the next period's
    assert shown["amount_due"] == 999 + 118  # 235 calls x half a cent = 117.5, half up

    with time_machine.travel(RUN, tick=False):
        outcome = payments.take_payment(fresh(sub), run_date=D)
    assert outcome.status == "paid", outcome.reason
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [receipt] = receipts_of(sub)
    assert charge["amount"] == receipt.ProcessedAmount == shown["amount_due"]
    assert (receipt.UsageQuantity, receipt.UsageStart, receipt.UsageEnd) == (235, "2027-02-15", "2027-03-15")

    with time_machine.travel(AFTER_RUN, tick=False):
        # sent now, on Tokyo's 15 March (UTC's 14th): the new period's, counted
        now = write_api.post("/meter_events", _event(sub, "after-the-run", AFTER_RUN, 7)).json()
        assert now["status"] == "accepted", now
        # of Tokyo's 14 March, sent after the run billed that day: refused, never billed twice or lost silently
        late = write_api.post("/meter_events", _event(sub, "late", datetime(2027, 3, 14, 14, 45, tzinfo=UTC), 5))
        assert (late.status_code, late.json()["error"]["type"]) == (400, "period_billed"), late.json()
        following = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
        usage = read_api.get("/meters/api_calls/usage", customer=sub.account_id).json()
    [_fee, used] = following["lines"]
    assert used["quantity"] == 1007  # the next period so far: 1,000 + 7
    # this month so far in Tokyo: 1 to 15 March, its days billed and not
    assert (usage["from"], usage["to"], usage["value"]) == ("2027-03-01", "2027-03-16", 35 + 1000 + 7)
