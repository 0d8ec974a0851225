"""The access patterns (docs/TABLE.md, "Access patterns"), on moto and on DynamoDB Local
(``table`` runs each twice)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import boto3
import pytest
from django.conf import settings

from billing import access
from billing.models import BillingItem, Subscription, SubscriptionStatus
from core.payments.simulated import SimulatedGateway
from tests.builders import make_account, make_subscription

pytestmark = pytest.mark.django_db(databases=[])


def raw_items(pk: str) -> list[dict]:
    """Items as DynamoDB stores them, read with plain boto3 (not through PynamoDB)."""
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=settings.DYNAMODB_ENDPOINT)
    out = client.query(
        TableName=settings.DYNAMODB_TABLE,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )
    return out["Items"]


def raw_index(index: str, key_attr: str, value: str) -> list[dict]:
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=settings.DYNAMODB_ENDPOINT)
    return client.query(
        TableName=settings.DYNAMODB_TABLE, IndexName=index,
        KeyConditionExpression="#k = :v",
        ExpressionAttributeNames={"#k": key_attr},
        ExpressionAttributeValues={":v": {"S": value}},
    )["Items"]


def test_key_formats_on_the_raw_items(table) -> None:
    account = make_account()
    sub = make_subscription(account, sku="GYM-CITY")
    receipt, created = access.create_receipt(
        sub, billing_date=date(2027, 1, 15), amount=999, currency="USD", charge_id="ch_1", retention_days=200
    )
    assert created
    account_id = account.account_id
    items = {i["SK"]["S"]: i for i in raw_items(f"ACC#{account_id}")}
    assert f"ACC#{account_id}" in items
    assert f"SUB#{sub.sub_id}#SKU#GYM-CITY" in items
    assert f"REC#2027-01-15#SKU#GYM-CITY#SUB#{sub.sub_id}" in items
    assert items[f"ACC#{account_id}"]["EntityType"] == {"S": "Account"}
    raw_sub = items[f"SUB#{sub.sub_id}#SKU#GYM-CITY"]
    assert raw_sub["EntityType"] == {"S": "Subscription"}
    assert raw_sub["PaymentAmount"] == {"N": "999"}  # money: a number of minor units
    assert raw_sub["Currency"] == {"S": "USD"}
    raw_receipt = items[f"REC#2027-01-15#SKU#GYM-CITY#SUB#{sub.sub_id}"]
    assert raw_receipt["ProcessedAmount"] == {"N": "999"}
    expected_ttl = int(datetime(2027, 1, 15, tzinfo=UTC).timestamp()) + 200 * 86400
    assert raw_receipt["TTL"] == {"N": str(expected_ttl)}


def test_account_ids_are_random(table) -> None:
    ids = {make_account("same@example.com").account_id for _ in range(5)}
    assert len(ids) == 5
    for account_id in ids:
        # 64 random bits as hex: all digits now and then (about 1 id in 1,850), so "not a
        # counter" is that the ids are not consecutive numbers, not that one has a letter
        assert "same" not in account_id and re.fullmatch(r"[0-9a-f]{16}", account_id)
    numbers = sorted(int(account_id, 16) for account_id in ids)
    assert any(b - a > 1 for a, b in zip(numbers, numbers[1:], strict=False))


def test_user_link(table) -> None:
    account = make_account(user_id=42)
    assert access.get_account_id_for_user(42) == account.account_id
    assert access.get_account_id_for_user(43) is None
    assert access.get_account(account.account_id).Email == "pat@example.com"


def test_subscriptions_by_account_returns_only_that_accounts_subscriptions(table) -> None:
    mine, other = make_account(), make_account("other@example.com")
    a = make_subscription(mine, sku="A-1")
    b = make_subscription(mine, sku="B-2")
    make_subscription(other, sku="A-1")
    access.create_receipt(a, billing_date=date(2027, 1, 15), amount=999, currency="USD",
                          charge_id="ch", retention_days=200)
    found = access.get_subscriptions_by_account(mine.account_id)
    assert sorted(s.SK for s in found) == sorted([a.SK, b.SK])
    assert all(isinstance(s, Subscription) for s in found)


def test_get_subscription_by_id_with_and_without_sku(table) -> None:
    account = make_account()
    sub = make_subscription(account, sku="A-1")
    assert access.get_subscription(account.account_id, sub.sub_id).SK == sub.SK
    assert access.get_subscription(account.account_id, sub.sub_id, sku="A-1").SK == sub.SK
    assert access.get_subscription(account.account_id, "nope") is None
    assert access.get_subscription(make_account("b@x.org").account_id, sub.sub_id) is None


def test_new_subscription_is_due_on_its_first_dates(table) -> None:
    """The seed misses this: without LastPaymentDate an item is not in GSI-2.

    Rule changed (M1 paid in advance): a new subscription owes its first
    (prorated) period from the day it is made, so it is due that day, paid through the
    day before; its first reminder announces the first anchor date."""
    account = make_account()
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    assert (sub.NextPaymentDate, sub.PaidThroughDate) == ("2027-01-10", "2027-01-09")
    assert sub.NextReminderDate == "2027-01-13"
    due = list(access.get_due_payments_by_date(date(2027, 1, 10)))
    assert [s.SK for s in due] == [sub.SK]
    assert due[0].PaymentDetails.Token == "tok_test_visa"  # projected: no GetItem needed
    assert due[0].PaymentAmount == 999 and due[0].Currency == "USD"
    reminders = list(access.get_due_reminders_by_date(date(2027, 1, 13)))
    assert [s.SK for s in reminders] == [sub.SK]
    assert list(access.get_due_payments_by_date(date(2027, 1, 13))) == []


def test_receipts_and_accounts_never_enter_the_indexes(table) -> None:
    account = make_account()
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    access.create_receipt(sub, billing_date=date(2027, 1, 20), amount=999, currency="USD",
                          charge_id="ch", retention_days=200)
    access.create_product("P-1", "Product", 100, "USD")
    access.record_event(account.account_id, actor="test", action="noop")
    # The hash keys are <date>#<shard>; the table has one shard here.
    for index, attr in (("GSI-1", "DueReminderKey"), ("GSI-2", "DuePaymentKey")):
        for value in ("2027-01-13#0", "2027-01-20#0"):
            for item in raw_index(index, attr, value):
                assert item["EntityType"]["S"] == "Subscription"
    for item in raw_items(account.PK):
        if item["EntityType"]["S"] != "Subscription":
            assert not {"NextReminderDate", "NextPaymentDate", "LastReminderDate", "LastPaymentDate",
                        "DueReminderKey", "DuePaymentKey"} & set(item)


def test_cancelled_subscription_leaves_both_indexes(table) -> None:
    account = make_account()
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    access.cancel_subscription(sub)
    assert list(access.get_due_payments_by_date(date(2027, 1, 20))) == []
    assert list(access.get_due_reminders_by_date(date(2027, 1, 13))) == []
    stored = access.get_subscription(account.account_id, sub.sub_id)
    assert stored.Status == SubscriptionStatus.CANCELLED
    assert stored.NextPaymentDate is None and stored.NextReminderDate is None
    with pytest.raises(access.ConditionFailed):
        access.cancel_subscription(stored)  # already cancelled: nothing to do


def test_stale_write_is_refused(table) -> None:
    account = make_account()
    sub = make_subscription(account)
    stale = access.get_subscription(account.account_id, sub.sub_id)
    fresh = access.get_subscription(account.account_id, sub.sub_id)
    access.change_payment_day(fresh, 3)
    with pytest.raises(access.ConditionFailed):
        access.change_payment_day(stale, 9)


def test_receipts_window_and_ttl(table) -> None:
    account = make_account()
    sub = make_subscription(account, payment_day=5, today=date(2026, 1, 1))
    for month in range(1, 12):
        access.create_receipt(sub, billing_date=date(2026, month, 5), amount=999, currency="USD",
                              charge_id=f"ch{month}", retention_days=200)
    other = make_subscription(make_account("b@x.org"), payment_day=5, today=date(2026, 1, 1))
    access.create_receipt(other, billing_date=date(2026, 10, 5), amount=1, currency="USD",
                          charge_id="x", retention_days=200)
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    got = access.get_receipts_by_account(account.account_id, date(2026, 5, 22), date(2026, 11, 22), now=now)
    assert [r.BillingDate for r in got] == ["2026-11-05", "2026-10-05", "2026-09-05", "2026-08-05",
                                            "2026-07-05", "2026-06-05"]
    # a receipt whose TTL has passed is hidden even if DynamoDB has not deleted it yet
    later = now + timedelta(days=200 - (now.date() - date(2026, 6, 5)).days + 1)
    got = access.get_receipts_by_account(account.account_id, date(2026, 5, 22), date(2026, 11, 22), now=later)
    assert "2026-06-05" not in [r.BillingDate for r in got]
    collection = access.get_account_collection(account.account_id, now=now)
    assert all(now < r.TTL for r in collection.receipts)
    # Jan-May receipts are past their 200 days on Nov 22 (May 5 + 200 days = Nov 21)
    assert [r.BillingDate[5:7] for r in collection.receipts] == ["11", "10", "09", "08", "07", "06"]


def test_receipt_is_written_once_per_billing_date(table) -> None:
    sub = make_subscription(make_account())
    first, created = access.create_receipt(sub, billing_date=date(2027, 1, 15), amount=999, currency="USD",
                                           charge_id="ch_a", retention_days=200)
    again, created_again = access.create_receipt(sub, billing_date=date(2027, 1, 15), amount=999,
                                                 currency="USD", charge_id="ch_b", retention_days=200)
    assert created and not created_again
    stored = access.get_receipt(sub.account_id, first.SK)
    assert stored.ChargeId == "ch_a"


def test_account_collection_is_one_query(table, ddb_requests) -> None:
    account = make_account()
    for sku in ("A-1", "B-2", "C-3"):
        make_subscription(account, sku=sku)
    ddb_requests.reset()
    collection = access.get_account_collection(account.account_id)
    assert ddb_requests.ops == ["Query"]
    assert collection.account.PK == account.PK and len(collection.subscriptions) == 3


def test_access_functions_never_scan(table, ddb_requests) -> None:
    account = make_account(user_id=7)
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    access.create_receipt(sub, billing_date=date(2027, 1, 20), amount=999, currency="USD",
                          charge_id="ch", retention_days=200)
    list(access.get_due_payments_by_date(date(2027, 1, 20)))
    list(access.get_due_reminders_by_date(date(2027, 1, 13)))
    access.get_subscriptions_by_account(account.account_id)
    access.get_receipts_by_account(account.account_id, date(2026, 7, 1), date(2027, 1, 31))
    access.get_subscription(account.account_id, sub.sub_id)
    access.get_account_id_for_user(7)
    access.cancel_subscription(access.get_subscription(account.account_id, sub.sub_id))
    counts = ddb_requests.by_name()
    # PutItem: account, user link, the SUBID# look-up item; the subscription, the receipt
    # and the cancel are each written with their audit event (M6) and their merchant
    # events (the outbox) in one TransactWriteItems.
    assert set(counts) <= {"Query", "GetItem", "PutItem", "UpdateItem", "TransactWriteItems"}
    # The receipt's number is taken by the receipt's own transaction (its series' counter):
    # no request of its own. GetItem: the subscription, and the seller's tax profile the
    # one-off receipt is taxed by (a run reads it once for all its receipts).
    assert counts == {"PutItem": 3, "TransactWriteItems": 3, "Query": 6, "GetItem": 2}


def test_each_pattern_costs_one_request(table, ddb_requests) -> None:
    account = make_account()
    ddb_requests.reset()
    sub = make_subscription(account)
    # the subscription with its audit event (M6), then its SUBID# look-up item
    assert ddb_requests.ops == ["TransactWriteItems", "PutItem"]
    ddb_requests.reset()
    list(access.get_due_payments_by_date(date(2027, 1, 15)))
    assert ddb_requests.ops == ["Query"]
    ddb_requests.reset()
    access.create_receipt(sub, billing_date=date(2027, 1, 15), amount=999, currency="USD",
                          charge_id="c", retention_days=200)
    # The receipt, its number (its series' counter moved on condition), its payment event
    # (M6) and its number's look-up item are one transaction; the seller's tax profile is
    # read for its tax (a payment run reads it once for all).
    assert ddb_requests.ops == ["GetItem", "TransactWriteItems"]


PAN_RUN = re.compile(r"\d{13,19}")


def test_no_card_number_is_stored(table, settings, tmp_path) -> None:
    gateway = SimulatedGateway(ledger_path=str(tmp_path / "ledger.sqlite3"))
    card = gateway.tokenize_card("4242 4242 4242 4242", 12, 2030, "123")
    assert (card.brand, card.last4) == ("Visa", "4242")
    account = make_account()
    sub = make_subscription(account, card=card)
    access.create_receipt(sub, billing_date=date(2027, 1, 15), amount=999, currency="USD",
                          charge_id="ch", retention_days=200)

    def strings(value):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "N":
                    continue
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)
        elif isinstance(value, str):
            yield value

    stored = raw_items(account.PK)
    assert stored
    # Random ids and tokens are hex and may hold a long digit run by chance: take them out.
    known_ids = (account.account_id, sub.sub_id, card.token)
    for item in stored:
        for text in strings(item):
            for known in known_ids:
                text = text.replace(known, "<id>")
            assert not PAN_RUN.search(text), text
            assert "4242424242424242" not in text
    details = access.get_subscription(account.account_id, sub.sub_id).PaymentDetails
    # ...and its issuing country (tax evidence), a country code, not card data
    assert set(details.attribute_values) <= {"Token", "Brand", "Last4", "ExpMonth", "ExpYear", "BillingAddress",
                                             "Country"}


def test_products(table) -> None:
    access.create_product("NEWS", "News", 999, "usd")
    with pytest.raises(access.AlreadyExists):
        access.create_product("NEWS", "News again", 1, "USD")
    assert [p.SKU for p in access.list_products()] == ["NEWS"]
    assert access.get_product("NEWS").Currency == "USD"
    assert access.get_product("missing") is None


def test_float_amounts_are_refused(table) -> None:
    with pytest.raises(ValueError):
        make_subscription(make_account(), amount=9.99)


def test_entities_share_one_connection(table) -> None:
    from billing.models import ENTITIES

    assert {id(cls._get_connection()) for cls in ENTITIES} == {id(BillingItem._get_connection())}


def test_a_change_of_day_moves_no_date_so_it_cannot_double_charge(table) -> None:
    """Rule changed (M1): the old rule refused a change while a payment was due
    (the change moved NextPaymentDate, and a run charging the old date could then charge
    the period again). Now a change sets only PaymentDay: the due date and the paid days
    stay, so it is allowed on the payment day and while past due."""
    account = make_account()
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    moved = access.change_payment_day(sub, 25, actor="pat@example.com")
    assert (moved.PaymentDay, moved.NextPaymentDate, moved.PaidThroughDate) == (25, "2027-01-10", "2027-01-09")
    [event] = [e for e in access.get_events_by_account(account.account_id) if e.Action == "subscription.payment_day_changed"]
    assert (event.Before["PaymentDay"], event.After["PaymentDay"], event.Actor) == (20, 25, "pat@example.com")


def test_audited_change_records_before_and_after_only_when_the_change_happens(table) -> None:
    account = make_account()
    sub = make_subscription(account, payment_day=20, today=date(2027, 1, 10))
    stale = access.get_subscription(account.account_id, sub.sub_id)
    with access.audited_change(sub, actor="ops@example.com", action="test.cancel"):
        access.cancel_subscription(sub)
    with pytest.raises(access.ConditionFailed), access.audited_change(stale, actor="ops@example.com",
                                                                       action="test.stale"):
        access.cancel_subscription(stale)  # already cancelled: refused, so nothing to record
    # The access functions record their own events too (M6): keep this block's.
    events = [e for e in access.get_events_by_account(account.account_id) if e.Action.startswith("test.")]
    assert [e.Action for e in events] == ["test.cancel"]
    assert events[0].Before["Status"] == "active" and events[0].After["Status"] == "cancelled"
    assert events[0].Subject == sub.SK and events[0].Actor == "ops@example.com"
