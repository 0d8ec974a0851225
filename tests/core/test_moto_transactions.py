"""tests/conftest.py makes moto's TransactWriteItems copy only the items it names (not the
whole table) to undo a cancelled transaction: on both engines a cancelled transaction
leaves every item as it was, and a committed one writes them all."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from django.conf import settings

from core.dynamo.engine import dynamodb_client


def item(pk: str, sk: str, **attrs: str) -> dict:
    return {"PK": {"S": pk}, "SK": {"S": sk}, **{name: {"S": value} for name, value in attrs.items()}}


def key(pk: str, sk: str) -> dict:
    return {"PK": {"S": pk}, "SK": {"S": sk}}


def everything(client, name: str) -> list[dict]:
    """The table's items but the table's own record (META#TABLE: its shard count)."""
    items = client.scan(TableName=name, ConsistentRead=True)["Items"]
    return sorted((i for i in items if not i["PK"]["S"].startswith("META#")), key=lambda i: (i["PK"]["S"], i["SK"]["S"]))


def test_a_cancelled_transaction_leaves_every_item_as_it_was(table) -> None:
    client, name = dynamodb_client(), settings.DYNAMODB_TABLE
    for pk in ("A", "B", "E"):
        client.put_item(TableName=name, Item=item(pk, "X", State="before"))
    before = everything(client, name)
    with pytest.raises(ClientError, match="TransactionCanceled"):
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": item("C", "X", State="new")}},
            {"Put": {"TableName": name, "Item": item("E", "X", State="replaced")}},
            {"Update": {"TableName": name, "Key": key("A", "X"), "UpdateExpression": "SET #s = :s",
                        "ExpressionAttributeNames": {"#s": "State"}, "ExpressionAttributeValues": {":s": {"S": "after"}}}},
            {"Delete": {"TableName": name, "Key": key("B", "X")}},
            {"ConditionCheck": {"TableName": name, "Key": key("D", "X"), "ConditionExpression": "attribute_exists(PK)"}},
        ])
    assert everything(client, name) == before


def test_a_committed_transaction_writes_every_item(table) -> None:
    client, name = dynamodb_client(), settings.DYNAMODB_TABLE
    client.put_item(TableName=name, Item=item("A", "X", State="before"))
    client.put_item(TableName=name, Item=item("B", "X", State="before"))
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": name, "Item": item("C", "X", State="new")}},
        {"Update": {"TableName": name, "Key": key("A", "X"), "UpdateExpression": "SET #s = :s",
                    "ExpressionAttributeNames": {"#s": "State"}, "ExpressionAttributeValues": {":s": {"S": "after"}}}},
        {"Delete": {"TableName": name, "Key": key("B", "X")}},
    ])
    assert everything(client, name) == [item("A", "X", State="after"), item("C", "X", State="new")]


def test_two_operations_on_one_item_are_refused_and_change_nothing(table) -> None:
    client, name = dynamodb_client(), settings.DYNAMODB_TABLE
    client.put_item(TableName=name, Item=item("A", "X", State="before"))
    before = everything(client, name)
    with pytest.raises(ClientError):
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": item("C", "X", State="new")}},
            {"Put": {"TableName": name, "Item": item("A", "X", State="first")}},
            {"Delete": {"TableName": name, "Key": key("A", "X")}},
        ])
    assert everything(client, name) == before
