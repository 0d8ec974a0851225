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


def test_moto_answers_item_operations_as_its_own_serializer_would(moto_table, monkeypatch) -> None:
    """tests/conftest.py writes moto's answers to item operations straight as JSON; with
    RPAY_CHECK_MOTO_JSON=1 each answer is compared with moto's serializer's, and differs in nothing."""
    monkeypatch.setenv("RPAY_CHECK_MOTO_JSON", "1")
    client, name = dynamodb_client(), settings.DYNAMODB_TABLE
    client.put_item(TableName=name, Item={**item("A", "1", State="x"), "N": {"N": "12.5"}, "L": {"L": [{"S": "a"}]},
                                          "M": {"M": {"b": {"BOOL": True}}}, "SS": {"SS": ["p", "q"]}},
                    ReturnValues="ALL_OLD")
    client.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item("A", str(n))}} for n in range(2, 6)]})
    assert client.get_item(TableName=name, Key=key("A", "1"))["Item"]["N"] == {"N": "12.5"}
    client.update_item(TableName=name, Key=key("A", "2"), UpdateExpression="SET #s = :s", ReturnValues="ALL_NEW",
                       ExpressionAttributeNames={"#s": "State"}, ExpressionAttributeValues={":s": {"S": "y"}})
    page = client.query(TableName=name, KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": {"S": "A"}},
                        Limit=2, ReturnConsumedCapacity="TOTAL")
    assert page["Count"] == 2 and "LastEvaluatedKey" in page
    assert client.scan(TableName=name, Select="COUNT")["Count"] >= 5
    client.batch_get_item(RequestItems={name: {"Keys": [key("A", "1"), key("A", "9")]}})
    client.transact_get_items(TransactItems=[{"Get": {"TableName": name, "Key": key("A", "3")}}])
    client.transact_write_items(TransactItems=[{"Delete": {"TableName": name, "Key": key("A", "4")}}])
    client.delete_item(TableName=name, Key=key("A", "5"), ReturnValues="ALL_OLD")
