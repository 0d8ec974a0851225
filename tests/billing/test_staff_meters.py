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
