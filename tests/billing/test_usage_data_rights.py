"""A customer's metered usage is part of its data: the export's ``data.json`` lists each
meter it used with its figure day by day (its own, no one else's), and a unique_count
meter's values (user ids, e-mails: text that may name a person) are kept only as hashes,
so no text of them stays in the table after the event is counted."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import time_machine

from billing.actions import meters as meter_actions
from billing.models import BillingItem, MeterAggregation
from billing.views.account_export import export_zip
from core.dynamo.engine import dynamodb_client
from tests.builders import make_account
from tests.shop.conftest import _shop_table

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 10, 12, tzinfo=UTC)
PERSON = "ann.example@example.com"


@pytest.fixture
def tables(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """The billing table and the shop's (the export reads the shop's part too)."""
    yield from _shop_table("moto", request, settings)


def _send(meter, account, n: int, value, day: int) -> None:
    at = int(datetime(2027, 3, day, 9, tzinfo=UTC).timestamp())
    assert meter_actions.record_usage(meter, customer=account.account_id, identifier=f"{account.account_id}-{n}",
                                      value=value, timestamp=at, now=NOW) is not None


def test_the_export_lists_each_meter_used_day_by_day_and_no_one_elses(tables) -> None:
    calls = meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    users = meter_actions.add_meter("active_users", "Active users", MeterAggregation.UNIQUE_COUNT, actor="test")
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")  # never used by them
    pat, bob = make_account("pat@example.com"), make_account("bob@example.com")
    with time_machine.travel(NOW, tick=False):
        for n, (value, day) in enumerate([(3, 1), ("2.5", 1), (10, 4)]):
            _send(calls, pat, n, value, day)
        for n, (value, day) in enumerate([(PERSON, 1), (PERSON, 1), ("bo", 1), (PERSON, 2)]):
            _send(users, pat, 10 + n, value, day)
        _send(calls, bob, 0, 1000, 1)
        data = json.loads(zipfile.ZipFile(io.BytesIO(b"".join(export_zip(pat.account_id, language="en"))))
                          .read("data.json"))
    assert data["usage"] == [
        {"meter": "active_users", "name": "Active users", "aggregation": "unique_count",
         "days": {"2027-03-01": "2", "2027-03-02": "1"}},
        {"meter": "api_calls", "name": "API calls", "aggregation": "sum",
         "days": {"2027-03-01": "5.5", "2027-03-04": "10"}},
    ]
    readme = zipfile.ZipFile(io.BytesIO(b"".join(export_zip(bob.account_id, language="en")))).read("README.txt")
    assert b'"usage" in data.json' in readme


def test_a_unique_count_value_is_kept_only_as_its_hash(tables) -> None:
    users = meter_actions.add_meter("active_users", "Active users", MeterAggregation.UNIQUE_COUNT, actor="test")
    calls = meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    pat = make_account("pat@example.com")
    with time_machine.travel(NOW, tick=False):
        _send(users, pat, 1, PERSON, 1)
        _send(calls, pat, 2, "7.25", 1)
    # every item of the table, as DynamoDB stores it (a test may Scan; rpay never does)
    items = dynamodb_client().scan(TableName=BillingItem.Meta.table_name)["Items"]
    stored = json.dumps(items)
    assert PERSON not in stored and "ann.example" not in stored
    values = sorted(item["Value"]["S"] for item in items if item.get("EntityType", {}).get("S") == "MeterEventRecord")
    assert values[0] == "7.25" and values[1].startswith("sha256:")
