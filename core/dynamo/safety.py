"""What a production table must have beyond its keys and indexes, and how a table differs.

On AWS, ``setup_dynamodb`` makes each table on-demand (PAY_PER_REQUEST: no capacity to
plan, a payment run's burst is absorbed), with point-in-time recovery (35 days of
restores to any second: the receipts are money records), deletion protection (a
``DeleteTable`` by mistake is refused until someone turns it off on purpose), TTL on the
expiry attribute, and the tags of ``DYNAMODB_TAGS`` (cost allocation, ownership).

A table that already exists is compared, never changed behind the operator's back:
``differences`` lists what is not as wanted, each with the call that fixes it, and the
command runs those only with ``--apply``. Tags the setting does not name are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

ON_DEMAND = "PAY_PER_REQUEST"


@dataclass(frozen=True)
class WantedTable:
    """What ``setup_dynamodb`` wants of a table. ``protect``: the production settings
    (on-demand, PITR, deletion protection, tags); off on a local engine, where tests and
    ``make run`` delete and remake tables."""

    ttl_attribute: str | None
    protect: bool
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Difference:
    what: str  # e.g. "point-in-time recovery"
    found: str
    wanted: str
    fix: Callable[[], Any]

    def describe(self) -> str:
        return f"{self.what}: {self.found}, wanted {self.wanted}"


def parse_tags(items: list[str]) -> dict[str, str]:
    """``["team=billing", "env=prod"]`` (DYNAMODB_TAGS, comma-separated) as a dict."""
    tags = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"a tag is key=value, not {item!r}")
        tags[key.strip()] = value.strip()
    return tags


def differences(client: Any, table_name: str, wanted: WantedTable) -> list[Difference]:
    """What ``table_name`` lacks of ``wanted``, read with Describe* and ListTagsOfResource."""
    found: list[Difference] = []
    if wanted.ttl_attribute:
        ttl = client.describe_time_to_live(TableName=table_name).get("TimeToLiveDescription", {})
        if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
            found.append(Difference(
                "TTL", ttl.get("TimeToLiveStatus", "DISABLED").lower(), f"enabled on {wanted.ttl_attribute}",
                lambda: client.update_time_to_live(TableName=table_name, TimeToLiveSpecification={
                    "Enabled": True, "AttributeName": wanted.ttl_attribute})))
    if not wanted.protect:
        return found
    table = client.describe_table(TableName=table_name)["Table"]
    mode = table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    if mode != ON_DEMAND:
        found.append(Difference("capacity", mode.lower(), "on-demand (PAY_PER_REQUEST)",
                                lambda: client.update_table(TableName=table_name, BillingMode=ON_DEMAND)))
    if not table.get("DeletionProtectionEnabled", False):
        found.append(Difference("deletion protection", "off", "on", lambda: client.update_table(
            TableName=table_name, DeletionProtectionEnabled=True)))
    backups = client.describe_continuous_backups(TableName=table_name)["ContinuousBackupsDescription"]
    pitr = backups.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus", "DISABLED")
    if pitr != "ENABLED":
        found.append(Difference("point-in-time recovery", pitr.lower(), "enabled", lambda: client.update_continuous_backups(
            TableName=table_name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})))
    arn = table["TableArn"]
    current = {t["Key"]: t["Value"] for t in client.list_tags_of_resource(ResourceArn=arn).get("Tags", [])}
    missing = {k: v for k, v in wanted.tags.items() if current.get(k) != v}
    if missing:
        shown = ", ".join(f"{k}={current[k]}" if k in current else f"{k} unset" for k in sorted(missing))
        found.append(Difference("tags", shown, ", ".join(f"{k}={v}" for k, v in sorted(missing.items())),
                                lambda: client.tag_resource(ResourceArn=arn, Tags=[
                                    {"Key": k, "Value": v} for k, v in sorted(missing.items())])))
    return found


def apply(found: list[Difference]) -> list[str]:
    """Run each difference's fix, in order; the lines saying what changed or why not."""
    lines = []
    for difference in found:
        try:
            difference.fix()
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            lines.append(f"could not change {difference.what}: {code}")
        else:
            lines.append(f"changed {difference.what}: now {difference.wanted}")
    return lines
