"""moto under the payment run's threads: readers of an item while other threads add
attributes to it, as the run's workers read subscriptions while others record their
charges. moto writes an answer from the stored item itself, so a reader used to meet an
item changing under it ("dictionary changed size during iteration") when only the backend's
own methods took turns; tests/conftest.py now makes a whole request take its turn.

Against moto only: DynamoDB Local is a server of its own and answers each request whole."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

from core.dynamo.engine import dynamodb_client

WRITERS = 4
READERS = 4
ROUNDS = 60


def test_readers_never_meet_an_item_changing_under_them(moto_table) -> None:
    client, name = dynamodb_client(), settings.DYNAMODB_TABLE
    key = {"PK": {"S": "RACE"}, "SK": {"S": "ITEM"}}
    client.put_item(TableName=name, Item={**key, "State": {"S": "new"}})
    start = threading.Barrier(WRITERS + READERS)

    def write(worker: int) -> int:
        start.wait()
        for n in range(ROUNDS):
            # a new attribute each time: the stored item's attribute map grows
            client.update_item(TableName=name, Key=key, UpdateExpression="SET #a = :v",
                               ExpressionAttributeNames={"#a": f"W{worker}N{n}"},
                               ExpressionAttributeValues={":v": {"N": str(n)}})
        return ROUNDS

    def read(_: int) -> int:
        start.wait()
        seen = 0
        for _n in range(ROUNDS):
            seen += len(client.get_item(TableName=name, Key=key, ConsistentRead=True)["Item"])
            seen += client.query(TableName=name, KeyConditionExpression="PK = :pk",
                                 ExpressionAttributeValues={":pk": {"S": "RACE"}})["Count"]
        return seen

    with ThreadPoolExecutor(max_workers=WRITERS + READERS) as pool:
        writers = [pool.submit(write, w) for w in range(WRITERS)]
        readers = [pool.submit(read, r) for r in range(READERS)]
        # .result() raises what a thread raised: a reader that met the item changing fails here
        assert sum(f.result() for f in writers) == WRITERS * ROUNDS
        assert all(f.result() > 0 for f in readers)

    stored = client.get_item(TableName=name, Key=key, ConsistentRead=True)["Item"]
    assert len(stored) == 3 + WRITERS * ROUNDS  # PK, SK, State and every attribute written
