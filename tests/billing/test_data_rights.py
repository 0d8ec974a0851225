"""Data rights: the export holds the account's whole partition and nothing else; closing
erases every personal field but the receipts' (kept by TTL), cancels and refunds once,
and charges nothing after, even twice or beside a payment run. Both engines."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from billing import access, batches
from billing.account_export import export_zip
from billing.actions import data_rights, lifecycle
from billing.models import BillingItem
from core.dynamo.engine import dynamodb_client
from core.payments.gateway import get_gateway
from tests.builders import make_customer_with_history, seed_due
from tests.conftest import ENGINES
from tests.shop.conftest import _shop_table

pytestmark = pytest.mark.django_db


@pytest.fixture(params=ENGINES)
def tables(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """The billing table and the shop's (which registers its part of the data) on one engine."""
    yield from _shop_table(request.param, request, settings)


@pytest.fixture
def local_tables(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """Both tables on DynamoDB Local only: real threads need its real conditional writes."""
    yield from _shop_table("ddblocal", request, settings)


def raw_partition(account_id: str) -> list[dict]:
    """Every item of ``ACC#<id>`` as DynamoDB stores it: a plain Query, page by page."""
    client, items, start = dynamodb_client(), [], None
    while True:
        page = client.query(TableName=BillingItem.Meta.table_name, KeyConditionExpression="PK = :pk",
                            ExpressionAttributeValues={":pk": {"S": f"ACC#{account_id}"}}, ConsistentRead=True,
                            **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def raw_item(pk: str) -> dict | None:
    return dynamodb_client().get_item(TableName=BillingItem.Meta.table_name, Key={"PK": {"S": pk}, "SK": {"S": pk}},
                                      ConsistentRead=True).get("Item")


def unzip(account_id: str, language: str = "it") -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(b"".join(export_zip(account_id, language=language))))


def with_comment(c) -> None:
    """The active subscription cancelled at period end with the customer's own words."""
    lifecycle.cancel_at_period_end(c.sub, today=date.today(), actor=c.account.Email, reason="too_expensive",
                                   comment="My neighbour Ann Example reads it to me")


def test_the_export_holds_every_item_of_the_partition_and_nothing_of_another(tables) -> None:
    from shop import access as shop_access

    pat, bob = make_customer_with_history("pat@example.com"), make_customer_with_history("bob@example.com")
    with_comment(pat)
    shop_access.create_customer(pat.account_id, "pat@example.com", "Pat Example")
    archive = unzip(pat.account_id)
    data = json.loads(archive.read("data.json"))

    exported = {(i["PK"], i["SK"]) for i in data["items"]}
    raw = {(i["PK"]["S"], i["SK"]["S"]) for i in raw_partition(pat.account_id)}
    assert exported == raw and len(data["items"]) == len(raw)
    everything = b"".join(archive.read(n) for n in archive.namelist())
    assert b"bob@example.com" not in everything and bob.account_id.encode() not in everything
    cards = [i for i in data["items"] if "PaymentDetails" in i or "Details" in i]
    assert cards and all("Token" not in (i.get("PaymentDetails") or i.get("Details")) for i in cards)
    assert data["shop"]["customer"]["Email"] == "pat@example.com"
    receipts = [i for i in data["items"] if i["EntityType"] == "Receipt"]
    pdfs = [n for n in archive.namelist() if n.startswith("receipts/")]
    assert len(pdfs) == len(receipts) == 1 and archive.read(pdfs[0]).startswith(b"%PDF")
    assert "data.json" in archive.read("README.txt").decode()  # in Italian, naming the files


def test_closing_erases_every_personal_field_but_the_receipts_which_get_their_ttl(tables, settings) -> None:
    from shop import access as shop_access

    settings.RPAY_SELLER_COUNTRY = "DE"  # six years
    pat = make_customer_with_history("pat@example.com")
    with_comment(pat)
    shop_access.create_customer(pat.account_id, "pat@example.com", "Pat Example")
    user_id = pat.account.UserId
    mail.outbox.clear()

    done = data_rights.close_account(pat.account_id, today=date.today())

    assert done.closed_now and done.receipts_kept == 1
    closing = [m for m in mail.outbox if m.to == ["pat@example.com"] and "closed" in m.subject]
    assert len(closing) == 1 and "1 receipt" in closing[0].body and "6 years" in closing[0].body
    personal = ("pat@example.com", "Pat Example", "neighbour Ann", "tok_test_visa")
    for item in raw_partition(pat.account_id):
        text = json.dumps(item)
        if item["EntityType"]["S"] == "Receipt":
            billed = date.fromisoformat(item["BillingDate"]["S"])
            ttl = datetime.fromtimestamp(int(item["TTL"]["N"]), UTC).date()
            assert ttl == billed.replace(year=billed.year + 6)
            continue
        assert not [p for p in personal if p in text], text
        assert item["EntityType"]["S"] != "Card"
    assert raw_item(f"USER#{user_id}") is None
    assert not get_user_model().objects.filter(pk=user_id).exists()
    assert shop_access.get_customer_by_customer_id(pat.account_id) is None
    assert not [s for s in access.get_subscriptions_by_account(pat.account_id) if s.is_live]
    # the e-mail is free for a new, unrelated account
    again = get_user_model().objects.create_user("pat@example.com", email="pat@example.com", password="x-long-Pw-1")
    assert access.get_account_id_for_user(again.pk) is None


def test_closing_twice_refunds_nothing_twice_and_a_payment_run_after_charges_nothing(tables) -> None:
    pat = make_customer_with_history("pat@example.com")
    gateway = get_gateway()
    first = data_rights.close_account(pat.account_id, today=date.today())
    refunds, charges = gateway.refunds_made(), gateway.charges_made()
    second = data_rights.close_account(pat.account_id, today=date.today())
    assert first.closed_now and not second.closed_now and second.cancelled == []
    assert sorted(first.cancelled) == sorted([pat.sub.sub_id, pat.past_due.sub_id])
    for day in range(1, 29):
        batches.run_payments(run_date=date.today().replace(day=day), catch_up_days=0)
    assert gateway.refunds_made() == refunds
    assert gateway.charges_made() == charges


def test_a_close_beside_a_payment_run_charges_and_refunds_nothing_twice(local_tables) -> None:
    due = date(2027, 3, 15)
    subs = seed_due(6, due=due)
    # the seeded subscriptions live in accounts acct<sub_id>: give each its account item
    for sub in subs:
        access.create_account(sub.Email, account_id=sub.account_id)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(work) -> None:
        barrier.wait()
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - failed in the test's thread
            errors.append(error)

    def close_all() -> None:
        for sub in subs:
            data_rights.close_account(sub.account_id, today=due)

    threads = [threading.Thread(target=run, args=(w,)) for w in
               (lambda: batches.run_payments(run_date=due, workers=2, catch_up_days=0), close_all)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    gateway = get_gateway()
    charged = Counter(c["metadata"]["sub_id"] for c in gateway.charges_made(billing_date=due.isoformat()))
    assert all(n <= 1 for n in charged.values())
    refunds = gateway.refunds_made()
    assert all(n == 1 for n in Counter(r["charge_id"] for r in refunds).values())
    amounts = {c["charge_id"]: c["amount"] for c in gateway.charges_made()}
    assert all(r["amount"] <= amounts[r["charge_id"]] for r in refunds)
    for sub in subs:  # and every account ended closed and erased
        assert not [s for s in access.get_subscriptions_by_account(sub.account_id) if s.is_live]
        named = [i for i in raw_partition(sub.account_id) if sub.Email in json.dumps(i)]
        assert [i["EntityType"]["S"] for i in named if i["EntityType"]["S"] != "Receipt"] == [], named
