"""Tables on the engine: each app registers its table (its base model and what it adds
when the table is set up, exported or seeded), and the commands loop over them.

A table's schema (keys, GSIs and their projections) comes from its PynamoDB models:
``Model.create_table`` collects the indexes declared on them, so the models are the
single source of truth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException
from pynamodb.models import Model

from core.dynamo.engine import dynamodb_client


@dataclass(frozen=True)
class RegisteredTable:
    """One app's table. ``prepare`` runs after every ``ensure_table`` (TTL, a META item)
    and returns what it set up (``TableStatus`` fields); ``workbench`` gives its NoSQL
    Workbench model; ``seed_demo`` loads its demo data (given the demo log-ins' password)
    and returns a line per thing done."""

    label: str
    base: type[Model]
    description: str
    prepare: Callable[..., dict[str, Any]] | None = None
    workbench: Callable[[], dict[str, Any]] | None = None
    workbench_name: str = ""
    workbench_description: str = ""
    seed_demo: Callable[[str], list[str]] | None = None
    # The attribute its items expire by (TTL), which setup_dynamodb checks is on.
    ttl_attribute: str | None = None


_TABLES: list[RegisteredTable] = []


def register(table: RegisteredTable) -> None:
    """Add an app's table (from its ``AppConfig.ready``); registering again replaces it."""
    _TABLES[:] = [t for t in _TABLES if t.label != table.label]
    _TABLES.append(table)


def registered() -> list[RegisteredTable]:
    """The tables in the order their apps were registered (the first is the main one)."""
    return list(_TABLES)


def _main_table() -> type[Model]:
    if not _TABLES:
        raise RuntimeError("no table is registered (core.dynamo.table.register)")
    return _TABLES[0].base


@dataclass
class TableStatus:
    created: bool
    description: dict
    ttl: str = "not used"  # "enabled" | "disabled" | "unsupported: <reason>" | "not used"
    due_shards: Any = None  # the billing table's DueShardLayout
    extra: dict[str, Any] = field(default_factory=dict)


def ensure_table(wait: bool = True, model: type[Model] | None = None, **options: Any) -> TableStatus:
    """Create the table if it is missing (idempotent), wait for it, then let its app
    prepare it (``options`` go to ``prepare``: the billing table takes ``due_shards``).
    ``model``: a registered table's base model (default: the first registered, billing's)."""
    model = model or _main_table()
    created = False
    if not model.exists():
        model.create_table(wait=wait, billing_mode="PAY_PER_REQUEST")
        created = True
    spec = next((t for t in _TABLES if t.base is model), None)
    prepared = dict(spec.prepare(**options)) if spec and spec.prepare else {}
    ttl = prepared.pop("ttl", "not used")
    due_shards = prepared.pop("due_shards", None)
    return TableStatus(created=created, description=describe_table(model), ttl=ttl, due_shards=due_shards,
                       extra=prepared)


def enable_ttl(model: type[Model], attribute: str) -> str:
    """Ask DynamoDB to expire ``model``'s items through ``attribute``; say so when the
    engine cannot."""
    client = dynamodb_client()
    try:
        current = client.describe_time_to_live(TableName=model.Meta.table_name)
        if current.get("TimeToLiveDescription", {}).get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            return "enabled"
        client.update_time_to_live(
            TableName=model.Meta.table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute},
        )
        return "enabled"
    except ClientError as error:
        return f"unsupported: {error.response.get('Error', {}).get('Code', 'error')}"
    except (BotoCoreError, PynamoDBException) as error:
        return f"unsupported: {type(error).__name__}"


def ttl_status(model: type[Model]) -> str:
    """``enable_ttl``'s answer without changing anything: "enabled", "disabled" or
    "unsupported: <reason>"."""
    try:
        current = dynamodb_client().describe_time_to_live(TableName=model.Meta.table_name)
    except ClientError as error:
        return f"unsupported: {error.response.get('Error', {}).get('Code', 'error')}"
    except (BotoCoreError, PynamoDBException) as error:
        return f"unsupported: {type(error).__name__}"
    status = current.get("TimeToLiveDescription", {}).get("TimeToLiveStatus")
    return "enabled" if status in ("ENABLED", "ENABLING") else "disabled"


def describe_table(model: type[Model] | None = None) -> dict:
    return (model or _main_table()).describe_table()


def delete_table(model: type[Model] | None = None) -> None:
    model = model or _main_table()
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
