"""`manage.py export_workbench_model`: a NoSQL Workbench model that matches the live table."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command

from billing.models import ENTITIES, BillingItem
from core.dynamo.table import describe_table

# The key sets of the NoSQL Workbench model the table's design started from
# (RecurringPaymentsSchema.json), spelled out so the test needs no file outside the repository.
SEED_TOP = {"ModelName", "ModelMetadata", "DataModel"}
SEED_METADATA = {"Author", "DateCreated", "DateLastModified", "Description", "AWSService", "Version"}
SEED_TABLE = {"TableName", "KeyAttributes", "NonKeyAttributes", "TableFacets", "GlobalSecondaryIndexes",
              "DataAccess", "BillingMode"}
SEED_FACET = {"FacetName", "KeyAttributeAlias", "TableData", "NonKeyAttributes", "DataAccess"}


def export(**options) -> dict:
    out = io.StringIO()
    call_command("export_workbench_model", stdout=out, **options)
    return json.loads(out.getvalue())


def test_matches_the_live_table(table, ddb_requests) -> None:
    model = export()
    assert ddb_requests.total == 0  # generated from the code, not read from the table
    live = describe_table()
    (exported,) = model["DataModel"]
    assert exported["TableName"] == live["TableName"]

    types = {d["AttributeName"]: d["AttributeType"] for d in live["AttributeDefinitions"]}
    keys = {k["KeyType"]: k["AttributeName"] for k in live["KeySchema"]}
    assert exported["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": keys["HASH"], "AttributeType": types[keys["HASH"]]},
        "SortKey": {"AttributeName": keys["RANGE"], "AttributeType": types[keys["RANGE"]]},
    }

    live_gsis = {g["IndexName"]: g for g in live["GlobalSecondaryIndexes"]}
    assert {g["IndexName"] for g in exported["GlobalSecondaryIndexes"]} == set(live_gsis) == {"GSI-1", "GSI-2"}
    for gsi in exported["GlobalSecondaryIndexes"]:
        real = live_gsis[gsi["IndexName"]]
        real_keys = {k["KeyType"]: k["AttributeName"] for k in real["KeySchema"]}
        assert gsi["KeyAttributes"]["PartitionKey"] == {"AttributeName": real_keys["HASH"],
                                                        "AttributeType": types[real_keys["HASH"]]}
        assert gsi["KeyAttributes"]["SortKey"] == {"AttributeName": real_keys["RANGE"],
                                                   "AttributeType": types[real_keys["RANGE"]]}
        assert gsi["Projection"]["ProjectionType"] == real["Projection"]["ProjectionType"]
        assert set(gsi["Projection"]["NonKeyAttributes"]) == set(real["Projection"]["NonKeyAttributes"])
        # the batches need the discriminator in the index (docs/TABLE.md)
        assert "EntityType" in gsi["Projection"]["NonKeyAttributes"]
    assert exported["BillingMode"] == live.get("BillingModeSummary", {}).get("BillingMode", "PAY_PER_REQUEST")


def test_has_the_seed_format_and_every_entity(moto_table) -> None:
    model = export()
    assert set(model) == SEED_TOP
    assert set(model["ModelMetadata"]) == SEED_METADATA
    (table,) = model["DataModel"]
    assert set(table) == SEED_TABLE  # on-demand: no ProvisionedCapacitySettings
    facet_keys = SEED_FACET
    facets = {f["FacetName"]: f for f in table["TableFacets"]}
    assert set(facets) == {e.__name__ for e in ENTITIES}
    attribute_types = {a["AttributeName"]: a["AttributeType"] for a in table["NonKeyAttributes"]}
    assert attribute_types["PaymentAmount"] == "N" and attribute_types["PaymentDetails"] == "M"
    assert attribute_types["TTL"] == "N" and attribute_types["EntityType"] == "S"
    for entity in ENTITIES:
        facet = facets[entity.__name__]
        assert set(facet) == facet_keys
        assert 1 <= len(facet["TableData"]) <= 3
        assert set(facet["NonKeyAttributes"]) == {
            a.attr_name for a in entity.get_attributes().values() if a.attr_name not in ("PK", "SK")}
        for item in facet["TableData"]:
            # each sample is a valid item of its entity, keyed by its own templates
            parsed = BillingItem.from_raw_data(item)
            assert type(parsed) is entity
            entity.pk_template.parse(item["PK"]["S"]) if entity.pk_template.fields else None
            entity.sk_template.parse(item["SK"]["S"])
            assert set(item) - {"PK", "SK"} <= set(attribute_types)


def test_samples_hold_no_card_number_and_keep_the_indexes_sparse(moto_table) -> None:
    (table,) = export()["DataModel"]
    text = json.dumps(table)
    assert not re.search(r"\d{13,19}", text)
    gsi_keys = {"NextPaymentDate", "LastPaymentDate", "NextReminderDate", "LastReminderDate",
                "DuePaymentKey", "DueReminderKey"}
    for facet in table["TableFacets"]:
        for item in facet["TableData"]:
            if facet["FacetName"] != "Subscription":
                assert not gsi_keys & set(item), facet["FacetName"]
            elif item["Status"]["S"] == "cancelled":
                assert not {"NextPaymentDate", "NextReminderDate", "DuePaymentKey", "DueReminderKey"} & set(item)
            else:
                assert gsi_keys <= set(item)


def test_output_file_and_stdout_agree(moto_table, tmp_path) -> None:
    target = tmp_path / "model.json"
    err = io.StringIO()
    call_command("export_workbench_model", output=str(target), stderr=err, stdout=io.StringIO())
    from_file = json.loads(target.read_text())
    from_stdout = export()
    for model in (from_file, from_stdout):
        model.pop("ModelMetadata")
    assert from_file == from_stdout
    assert "wrote" in err.getvalue()


@pytest.mark.parametrize("bad", ["/nonexistent-dir/model.json"])
def test_unwritable_output_is_an_error(moto_table, bad) -> None:
    with pytest.raises(OSError):
        call_command("export_workbench_model", output=bad, stderr=io.StringIO())
