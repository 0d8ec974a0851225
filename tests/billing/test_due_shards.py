"""Write-sharded due keys: ``<date>#<shard>`` on every live subscription and on
nothing else, and a day's items found across the shards exactly once."""

from __future__ import annotations

import zlib
from datetime import date, timedelta

import boto3
import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from billing import access
from billing.models import TableMeta
from tests.builders import TEST_CARD, make_account, make_subscription, seed_due, use_due_shards

pytestmark = pytest.mark.django_db(databases=[])


def raw_items(pk: str) -> list[dict]:
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=settings.DYNAMODB_ENDPOINT)
    return client.query(TableName=settings.DYNAMODB_TABLE, KeyConditionExpression="PK = :pk",
                        ExpressionAttributeValues={":pk": {"S": pk}})["Items"]


def test_the_shard_is_crc32_of_the_id_and_stable() -> None:
    # Fixed values: a change of hash would move every item (a migration, not an edit).
    assert access.shard_of("s000001", 8) == zlib.crc32(b"s000001") % 8
    assert [access.shard_of(f"{n:016x}", 8) for n in range(6)] == [zlib.crc32(f"{n:016x}".encode()) % 8
                                                                   for n in range(6)]
    assert access.due_key("abc", date(2026, 12, 1), 16) == f"2026-12-01#{zlib.crc32(b'abc') % 16}"


def test_sharded_keys_on_every_live_subscription_and_on_nothing_else(table) -> None:
    use_due_shards(8)
    account = make_account()
    subs = [make_subscription(account, sku=f"SKU-{n}", payment_day=1 + n, today=date(2027, 1, 10))
            for n in range(12)]
    access.create_receipt(subs[0], billing_date=date(2027, 1, 10), amount=999, currency="USD",
                          charge_id="ch", retention_days=200)
    for sub in subs[:4]:
        access.cancel_subscription(sub)
    cancelled = {sub.SK for sub in subs[:4]}
    due_names = {"NextPaymentDate", "NextReminderDate", "DuePaymentKey", "DueReminderKey"}
    shards_used = set()
    for item in raw_items(account.PK):
        kind, sk = item["EntityType"]["S"], item["SK"]["S"]
        if kind != "Subscription" or sk in cancelled:
            assert not due_names & set(item), sk
            continue
        sub_id = sk.split("#")[1]
        shard = zlib.crc32(sub_id.encode()) % 8
        shards_used.add(shard)
        assert item["DuePaymentKey"]["S"] == f"{item['NextPaymentDate']['S']}#{shard}"
        assert item["DueReminderKey"]["S"] == f"{item['NextReminderDate']['S']}#{shard}"
    assert len(shards_used) > 1  # twelve ids: spread, not all in one shard


def test_the_batch_keeps_the_keys_in_step_with_the_dates(moto_table) -> None:
    from billing import batches

    use_due_shards(4)
    subs = seed_due(6, due=date(2027, 3, 15))
    summary = batches.run_payments(run_date=date(2027, 3, 15), catch_up_days=0)
    assert summary.counts["paid"] == 6
    for sub in subs:
        [item] = [i for i in raw_items(sub.PK) if i["EntityType"]["S"] == "Subscription"]
        shard = zlib.crc32(sub.sub_id.encode()) % 4
        assert item["NextPaymentDate"]["S"] == "2027-04-15"
        assert item["DuePaymentKey"]["S"] == f"2027-04-15#{shard}"
        assert item["DueReminderKey"]["S"] == f"{item['NextReminderDate']['S']}#{shard}"
    assert list(access.get_due_payments_by_date(date(2027, 3, 15))) == []
    assert len(list(access.get_due_payments_by_date(date(2027, 4, 15)))) == 6


_days = iter(date(2028, 1, 1) + timedelta(days=10 * n) for n in range(10_000))  # examples never meet


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.sets(st.text(alphabet="0123456789abcdef", min_size=1, max_size=16), min_size=1, max_size=30),
       shards=st.integers(min_value=1, max_value=12))
def test_a_days_items_are_found_across_all_shards_exactly_once(moto_table, ids, shards) -> None:
    use_due_shards(shards)
    day = next(_days)
    card = access.payment_details_from(TEST_CARD)
    access.batch_items([access.due_subscription(f"a{i}", i, due=day, card=card) for i in ids])
    # a neighbour day's items are not that day's
    access.batch_items([access.due_subscription(f"b{i}", i, due=day + timedelta(days=1), card=card) for i in ids])

    found = [sub.sub_id for sub in access.get_due_payments_by_date(day)]
    assert sorted(found) == sorted(ids)
    reminded = [sub.sub_id for sub in access.get_due_reminders_by_date(day - timedelta(days=7))]
    assert sorted(reminded) == sorted(ids)
    assert access.count_due_payments_by_date(day) == len(ids)
    # the shards partition the day: each shard's Query holds exactly the ids hashed to it
    per_shard = [sorted(s.sub_id for s in access.get_due_payments_by_date(day, shards=[k])) for k in range(shards)]
    assert per_shard == [sorted(i for i in ids if zlib.crc32(i.encode()) % shards == k) for k in range(shards)]
    # a subset of shards: exactly their items
    half = list(range(0, shards, 2))
    assert sorted(s.sub_id for s in access.get_due_payments_by_date(day, shards=half)) == sorted(
        i for i in ids if zlib.crc32(i.encode()) % shards in half)


def test_all_shards_are_read_in_parallel_one_query_each(moto_table, ddb_requests) -> None:
    use_due_shards(6)
    seed_due(20, due=date(2027, 5, 1))
    ddb_requests.reset()
    assert len(list(access.get_due_payments_by_date(date(2027, 5, 1)))) == 20
    assert ddb_requests.by_name() == {"Query": 6}


def test_the_table_record_wins_over_the_setting_and_a_mismatch_is_one_line(moto_table, settings) -> None:
    use_due_shards(4)
    settings.DUE_SHARDS = 2
    access.forget_due_shard_layout()
    # the writers follow the table (a setting that disagrees is logged, never obeyed)
    assert access.due_shard_layout().write_shards == 4
    with pytest.raises(access.DueShardsMismatch) as error:
        access.check_due_shards()
    [line] = str(error.value).splitlines()
    assert "DUE_SHARDS=2" in line and "records 4 shard(s)" in line


def test_a_table_without_a_record_is_an_error(moto_table) -> None:
    TableMeta(TableMeta.pk(), TableMeta.sk()).delete()
    access.forget_due_shard_layout()
    with pytest.raises(access.DueShardsMismatch, match="setup_dynamodb"):
        access.check_due_shards()
