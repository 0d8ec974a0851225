"""setup_dynamodb against AWS (on moto): a new table is made on-demand with point-in-time
recovery, deletion protection, TTL and the configured tags; a table that exists is
compared and changed only with --apply."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.dynamo.engine import dynamodb_client
from core.dynamo.safety import parse_tags
from core.dynamo.table import delete_table

pytestmark = pytest.mark.django_db(databases=[])


def run(*args: str) -> str:
    out = StringIO()
    call_command("setup_dynamodb", *args, stdout=out)
    return out.getvalue()


def table_state(name: str) -> dict:
    client = dynamodb_client()
    table = client.describe_table(TableName=name)["Table"]
    backups = client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
    return {
        "mode": table.get("BillingModeSummary", {}).get("BillingMode"),
        "deletion protection": table.get("DeletionProtectionEnabled", False),
        "pitr": backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"],
        "ttl": client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["TimeToLiveStatus"],
        "tags": {t["Key"]: t["Value"] for t in client.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"]},
    }


PROTECTED = {"mode": "PAY_PER_REQUEST", "deletion protection": True, "pitr": "ENABLED", "ttl": "ENABLED",
             "tags": {"team": "billing", "env": "production"}}


@pytest.fixture
def on_aws(moto_table, settings) -> None:
    """The settings of a site on AWS: protection on (the default without an endpoint), tags set."""
    settings.DYNAMODB_PROTECTION = True
    settings.DYNAMODB_TAGS = ["team=billing", "env=production"]


def test_a_new_table_is_made_the_production_way(on_aws, settings) -> None:
    delete_table()  # the fixture's, made without protection
    out = run()
    assert f"{settings.DYNAMODB_TABLE} created" in out
    assert table_state(settings.DYNAMODB_TABLE) == PROTECTED
    assert table_state(settings.SHOP_DYNAMODB_TABLE)["deletion protection"] is True
    # Run again: nothing differs, nothing to apply.
    again = run()
    assert "differs" not in again
    assert "on-demand, point-in-time recovery and deletion protection on" in again


def test_a_table_that_exists_is_reported_and_changed_only_with_apply(on_aws, settings) -> None:
    name = settings.DYNAMODB_TABLE
    before = table_state(name)
    assert before["deletion protection"] is False and before["pitr"] == "DISABLED"

    report = run()
    assert f"{name} differs: deletion protection: off, wanted on" in report
    assert f"{name} differs: point-in-time recovery: disabled, wanted enabled" in report
    assert f"{name} differs: tags: env unset, team unset, wanted env=production, team=billing" in report
    assert "nothing changed; run setup_dynamodb --apply" in report
    assert table_state(name) == before

    applied = run("--apply")
    assert f"{name}: changed deletion protection: now on" in applied
    assert table_state(name) == PROTECTED
    assert "differs" not in run()


def test_a_changed_tag_value_is_a_difference(on_aws, settings) -> None:
    run("--apply")
    settings.DYNAMODB_TAGS = ["team=payments"]
    assert "tags: team=billing, wanted team=payments" in run()


def test_ttl_switched_off_is_reported_not_silently_enabled(moto_table, settings) -> None:
    """Even on a local engine (no protection), a table that exists is only reported."""
    client = dynamodb_client()
    name = settings.DYNAMODB_TABLE
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": False, "AttributeName": "TTL"})
    assert f"{name} differs: TTL: disabled, wanted enabled on TTL" in run()
    assert table_state(name)["ttl"] == "DISABLED"
    run("--apply")
    assert table_state(name)["ttl"] == "ENABLED"


def test_tags_are_key_value_pairs(on_aws, settings) -> None:
    assert parse_tags(["a=1", " b = two words "]) == {"a": "1", "b": "two words"}
    settings.DYNAMODB_TAGS = ["team"]
    with pytest.raises(CommandError, match="DYNAMODB_TAGS: a tag is key=value"):
        run()
