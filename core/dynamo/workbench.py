"""A table as a NoSQL Workbench data model (the format of the seeds' JSON models),
generated from its PynamoDB models so it cannot drift: attribute names and types from
``Model.get_attributes()``, keys and indexes from ``engine.table_schema`` (the schema
``setup_dynamodb`` creates the table from), one facet per entity with sample items
serialized by the entity itself. It reads nothing from DynamoDB."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from pynamodb.models import Model

from core.dynamo import engine


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


def table_model(base: type[Model], entities: Iterable[type[Model]],
                samples: Mapping[type[Model], list[Model]], *,
                facet_name: Callable[[type[Model]], str],
                key_aliases: Callable[[type[Model]], tuple[str, str]]) -> dict[str, Any]:
    """One table's entry of a Workbench model's ``DataModel`` list. ``facet_name`` and
    ``key_aliases`` (the partition and sort key templates) say how the app names an entity."""
    entities = tuple(entities)
    schema = engine.table_schema(base)
    types = attribute_types(entities)
    key_names = [k["AttributeName"] for k in schema["key_schema"]]
    facets = []
    for entity in entities:
        pk_alias, sk_alias = key_aliases(entity)
        facets.append({
            "FacetName": facet_name(entity),
            "KeyAttributeAlias": {"PartitionKeyAlias": pk_alias, "SortKeyAlias": sk_alias},
            "TableData": [item.serialize() for item in samples.get(entity, [])],
            "NonKeyAttributes": [a.attr_name for a in entity.get_attributes().values()
                                 if a.attr_name not in key_names],
            "DataAccess": {"MySql": {}},
        })
    indexes = []
    for index in sorted(schema["global_secondary_indexes"], key=lambda i: i["index_name"]):
        projection = {"ProjectionType": index["projection"]["ProjectionType"]}
        if "NonKeyAttributes" in index["projection"]:
            projection["NonKeyAttributes"] = list(index["projection"]["NonKeyAttributes"])
        indexes.append({
            "IndexName": index["index_name"],
            "KeyAttributes": workbench_key_attributes(index["key_schema"], types),
            "Projection": projection,
        })
    return {
        "TableName": base.Meta.table_name,
        "KeyAttributes": workbench_key_attributes(schema["key_schema"], types),
        "NonKeyAttributes": [{"AttributeName": name, "AttributeType": kind}
                             for name, kind in types.items() if name not in key_names],
        "TableFacets": facets,
        "GlobalSecondaryIndexes": indexes,
        "DataAccess": {"MySql": {}},
        "BillingMode": getattr(base.Meta, "billing_mode", None) or "PAY_PER_REQUEST",
    }


def document(name: str, description: str, tables: list[dict[str, Any]],
             now: datetime | None = None) -> dict[str, Any]:
    """A whole Workbench model holding ``tables`` (entries made by ``table_model``)."""
    stamp = (now or datetime.now(tz=UTC)).strftime("%b %d, %Y, %I:%M %p")
    return {
        "ModelName": name,
        "ModelMetadata": {
            "Author": "rpay (manage.py export_workbench_model)",
            "DateCreated": stamp,
            "DateLastModified": stamp,
            "Description": description,
            "AWSService": "Amazon DynamoDB",
            "Version": "3.0",
        },
        "DataModel": tables,
    }
