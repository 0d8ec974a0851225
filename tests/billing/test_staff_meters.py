"""The meters' staff pages: the finance role lists and adds meters; a taken event name or
one that cannot be an event name is a field error, and nothing is stored."""

from __future__ import annotations

import pytest
from django.urls import reverse

from billing.access import usage as metered
from tests.builders import make_user

pytestmark = pytest.mark.django_db


def test_finance_adds_and_lists_meters(client, moto_table) -> None:
    client.force_login(make_user("fin@rpay.localhost", staff=True, roles=["finance"]))
    page = client.get(reverse("admin:staff_meters"))
    assert page.status_code == 200 and "No meters." in page.content.decode()
    added = client.post(reverse("admin:staff_meter_add"),
                        {"event_name": "api_calls", "name": "API calls", "aggregation": "sum"})
    assert added.status_code == 302
    meter = metered.get_meter("api_calls")
    assert (meter.Name, meter.Aggregation, meter.CreatedBy) == ("API calls", "sum", "fin@rpay.localhost")
    listed = client.get(reverse("admin:staff_meters")).content.decode()
    assert 'data-testid="meter-api_calls"' in listed and "sum: of the events" in listed
    again = client.post(reverse("admin:staff_meter_add"),
                        {"event_name": "api_calls", "name": "Other", "aggregation": "max"})
    assert again.status_code == 200 and "already exists" in again.content.decode()
    for bad in ({"event_name": "API Calls", "name": "x", "aggregation": "sum"},
                {"event_name": "x", "name": "Bell\x07", "aggregation": "sum"},
                {"event_name": "y", "name": "y", "aggregation": "median"}):
        assert client.post(reverse("admin:staff_meter_add"), bad).status_code == 200
    assert [m.EventName for m in metered.list_meters()] == ["api_calls"]


def test_a_customers_usage_from_the_account_page(client, moto_table) -> None:
    from datetime import UTC, datetime

    import time_machine

    from billing.actions import meters as meter_actions
    from billing.models import MeterAggregation
    from tests.builders import make_account

    account = make_account()
    meter = meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="t")
    now = datetime(2027, 3, 10, 12, tzinfo=UTC)
    with time_machine.travel(now, tick=False):
        for n, (value, days_back) in enumerate((("10", 0), ("2.5", 1), ("7", 20))):
            meter_actions.record_usage(meter, customer=account.account_id, identifier=f"e{n}", value=value,
                                       timestamp=int(now.timestamp()) - days_back * 86400, now=now)
        client.force_login(make_user("sup@rpay.localhost", staff=True, roles=["support"]))
        page = client.get(reverse("admin:staff_account", args=[account.account_id])).content.decode()
        assert reverse("admin:staff_customer_usage", args=[account.account_id]) in page
        usage = client.get(reverse("admin:staff_customer_usage", args=[account.account_id])).content.decode()
    row = usage.split('data-testid="usage-api_calls"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-testid="so-far">12.5</td>' in row and '<td class="num">7</td>' in row
    assert "<td>sum: of the events" in row  # the aggregation in words, as the meters page says it
    assert client.get(reverse("admin:staff_customer_usage", args=["0000000000000000"])).status_code == 404


def test_an_aggregation_no_longer_offered_is_shown_as_stored() -> None:
    from billing.models import Meter
    from billing.staff.meters import aggregation_label

    assert aggregation_label(Meter(Aggregation="median")) == "median"
    assert str(aggregation_label(Meter(Aggregation="count"))) == "count: the events"
