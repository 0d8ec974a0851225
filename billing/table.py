"""Table lifecycle: create the one table from the PynamoDB models, enable TTL, describe it.

The schema (keys, both GSIs and their projections) comes from ``billing.models``:
``BillingItem.create_table`` collects the indexes declared on the ``Subscription``
subclass, so the models are the single source of truth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from pynamodb.exceptions import PynamoDBException
from pynamodb.models import Model

from billing.models import BillingItem, Receipt


@dataclass
class TableStatus:
    created: bool
    ttl: str  # "enabled" | "unsupported: <reason>"
    description: dict
    due_shards: Any = None  # the table's DueShardLayout (billing table only)


def ensure_table(wait: bool = True, model: type[Model] = BillingItem, due_shards: int | None = None) -> TableStatus:
    """Create the table if it is missing (idempotent), wait for it, and turn TTL on; record
    the due indexes' shard count with the billing table if it has none yet
    (``due_shards``, default ``settings.DUE_SHARDS``; ``status.due_shards`` is the record).

    ``model`` is the base model of another table on the same engine (the shop's);
    only the billing table uses TTL and shards."""
    created = False
    if not model.exists():
        model.create_table(wait=wait, billing_mode="PAY_PER_REQUEST")
        created = True
    if model is not BillingItem:
        return TableStatus(created=created, ttl="not used", description=describe_table(model))
    from billing.access.due_shards import record_due_shards

    layout = record_due_shards(due_shards or settings.DUE_SHARDS)
    return TableStatus(created=created, ttl=enable_ttl(), description=describe_table(model), due_shards=layout)


def enable_ttl() -> str:
    """Ask DynamoDB to expire receipts through ``TTL``; say so when the engine cannot."""
    client = BillingItem._get_connection().connection.client
    try:
        current = client.describe_time_to_live(TableName=BillingItem.Meta.table_name)
        if current.get("TimeToLiveDescription", {}).get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            return "enabled"
        client.update_time_to_live(
            TableName=BillingItem.Meta.table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": Receipt.TTL.attr_name},
        )
        return "enabled"
    except ClientError as error:
        return f"unsupported: {error.response.get('Error', {}).get('Code', 'error')}"
    except (BotoCoreError, PynamoDBException) as error:
        return f"unsupported: {type(error).__name__}"


def describe_table(model: type[Model] = BillingItem) -> dict:
    return model.describe_table()


def delete_table(model: type[Model] = BillingItem) -> None:
    if model.exists():
        model.delete_table()


def summarize(description: dict) -> list[str]:
    """Short human lines describing the table and its indexes."""
    keys = ", ".join(f"{k['AttributeName']} ({k['KeyType']})" for k in description["KeySchema"])
    lines = [f"table {description['TableName']}: {description.get('TableStatus')}, keys {keys}"]
    for gsi in description.get("GlobalSecondaryIndexes", []):
        gkeys = ", ".join(f"{k['AttributeName']} ({k['KeyType']})" for k in gsi["KeySchema"])
        proj = gsi["Projection"]
        extra = ", ".join(proj.get("NonKeyAttributes", []))
        lines.append(f"  {gsi['IndexName']}: keys {gkeys}; projection {proj['ProjectionType']} {extra}")
    return lines


# --- the NoSQL Workbench model (export_workbench_model, for both tables) --------------


def attribute_types(entities: Iterable[type[Model]]) -> dict[str, str]:
    """Every attribute of every entity with its DynamoDB type; one name, one type."""
    types: dict[str, str] = {}
    for entity in entities:
        for attr in entity.get_attributes().values():
            known = types.setdefault(attr.attr_name, attr.attr_type)
            if known != attr.attr_type:
                raise ValueError(f"{attr.attr_name} is {known} in one entity and {attr.attr_type} in another")
    return types


def workbench_key_attributes(key_schema: list[dict], types: dict[str, str]) -> dict:
    """A table's or index's key schema as Workbench's ``KeyAttributes`` (partition key first)."""
    keys = {}
    for key in key_schema:
        role = "PartitionKey" if key["KeyType"] == "HASH" else "SortKey"
        keys[role] = {"AttributeName": key["AttributeName"], "AttributeType": types[key["AttributeName"]]}
    return {"PartitionKey": keys["PartitionKey"], **({"SortKey": keys["SortKey"]} if "SortKey" in keys else {})}
