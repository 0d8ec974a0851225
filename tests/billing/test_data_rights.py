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
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from billing import access, batches
from billing.actions import data_rights, lifecycle
from billing.models import BillingItem
from billing.views.account_export import export_zip
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
    from shop.checkout import checkout
    from tests.shop.helpers import build_shop, request

    build_shop()
    order = checkout(request(("album", 1), customer_id=pat.account_id))
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
    [exported_order] = data["shop"]["orders"]
    assert exported_order["order"]["PK"] == order.PK and exported_order["invoice"]["Amount"] == order.Total
    assert "CardToken" not in exported_order["order"] and exported_order["order"]["CardLast4"] == "4242"
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
    from axes.models import AccessAttempt, AccessLog

    AccessAttempt.objects.create(username="pat@example.com", ip_address="203.0.113.9", user_agent="x",
                                 failures_since_start=2, get_data="", post_data="")
    AccessLog.objects.create(username="pat@example.com", ip_address="203.0.113.9", user_agent="x")
    AccessAttempt.objects.create(username="bob@example.com", ip_address="203.0.113.7", user_agent="x",
                                 failures_since_start=1, get_data="", post_data="")
    mail.outbox.clear()

    done = data_rights.close_account(pat.account_id, today=date.today())

    assert done.closed_now and done.receipts_kept == 1
    closing = [m for m in mail.outbox if m.to == ["pat@example.com"] and "closed" in m.subject]
    assert len(closing) == 1 and "1 receipt" in closing[0].body and "6 years" in closing[0].body
    assert pat.receipt.Number in closing[0].body  # each receipt kept, by its number
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
    # the log-in throttle's records of the user (and the IP addresses in them) are gone, others' kept
    assert not AccessAttempt.objects.filter(ip_address="203.0.113.9").exists()
    assert not AccessLog.objects.filter(username="pat@example.com").exists()
    assert AccessAttempt.objects.filter(username="bob@example.com").exists()
    for sub in (pat.sub, pat.past_due, pat.cancelled):  # the look-ups that name the account
        lookup = raw_item(f"SUBID#{sub.sub_id}")
        assert lookup and not [p for p in personal if p in json.dumps(lookup)]
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
        [ended] = access.get_subscriptions_by_account(sub.account_id)
        # not live, and no service after the close day: a charge that landed late was refunded
        assert not ended.is_live and ended.PaidThroughDate <= due.isoformat()
        items = raw_partition(sub.account_id)
        named = [i for i in items if sub.Email in json.dumps(i)]
        assert [i["EntityType"]["S"] for i in named if i["EntityType"]["S"] != "Receipt"] == [], named
        for receipt in (i for i in items if i["EntityType"]["S"] == "Receipt"):  # even one written late
            kept = datetime.fromtimestamp(int(receipt["TTL"]["N"]), UTC).date()
            assert kept.year == date.fromisoformat(receipt["BillingDate"]["S"]).year + 10


# --- the pages ------------------------------------------------------------------------------


def test_download_my_data_page_streams_the_zip_and_audits_it(tables) -> None:
    from tests.builders import make_customer, subscribe

    ann = make_customer("ann@example.com")
    subscribe(ann)
    page = ann.client.get("/account/data/")
    assert page.status_code == 200 and b"data-testid=\"download-data-form\"" in page.content
    response = ann.client.post("/account/data/")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert {"data.json", "README.txt"} <= set(archive.namelist())
    assert "account.data_exported" in [e.Action for e in access.get_events_by_account(ann.account_id)]


def test_close_my_account_asks_the_password_then_closes_and_logs_out(tables) -> None:
    from tests.builders import PASSWORD, make_customer, subscribe

    ann = make_customer("ann@example.com")
    subscribe(ann)
    page = ann.client.get("/account/close/")
    assert page.status_code == 200 and b"close-summary" in page.content
    wrong = ann.client.post("/account/close/", {"password": "not-it", "confirm": "on"})
    assert wrong.status_code == 200 and access.get_account(ann.account_id).ClosedDate is None
    done = ann.client.post("/account/close/", {"password": PASSWORD, "confirm": "on"})
    assert done.status_code == 302 and done["Location"] == "/account/closed/"
    assert access.get_account(ann.account_id).ClosedDate
    assert ann.client.get("/").status_code in (200, 302)
    assert ann.client.get("/account/data/").status_code == 302  # logged out: to the log-in page
    from django.test import Client

    again = Client().post("/login/", {"username": ann.email, "password": PASSWORD})
    assert again.status_code == 200  # the form again: no such user
    assert Client().get("/account/closed/").status_code == 200


def test_support_closes_an_account_on_request_with_its_reference_in_the_audit_log(tables) -> None:
    from django.test import Client
    from django.urls import reverse

    pat = make_customer_with_history("pat@example.com")
    clerk = Client()
    clerk.force_login(__import__("tests.builders", fromlist=["make_user"]).make_user(
        "clerk@example.com", staff=True, roles=["support"]))
    export = clerk.post(reverse("admin:staff_export_data", args=[pat.account_id]), {"reference": "TICKET-41"})
    assert export.status_code == 200 and export["Content-Type"] == "application/zip"
    b"".join(export.streaming_content)
    closed = clerk.post(reverse("admin:staff_close_account", args=[pat.account_id]), {"reference": "TICKET-42"})
    assert closed.status_code == 302
    events = {e.Action: e for e in access.get_events_by_account(pat.account_id)}
    assert events["staff.export_data"].Note == "TICKET-41" and events["staff.export_data"].Actor == "clerk@example.com"
    assert events["staff.close_account"].Note == "TICKET-42"
    assert "pat@example.com" not in json.dumps(raw_partition(pat.account_id)[0])
    page = clerk.get(reverse("admin:staff_account", args=[pat.account_id]))
    assert page.status_code == 200 and b"data-rights-links" in page.content


def test_a_charge_in_flight_during_the_close_is_refunded_whole_not_served(tables) -> None:
    from billing.operations import payments

    due = date(2027, 3, 15)
    [sub] = seed_due(1, due=due)
    access.create_account(sub.Email, account_id=sub.account_id)
    read_by_the_run = access.get_subscription(sub.account_id, sub.sub_id, sub.SKU)
    data_rights.close_account(sub.account_id, today=due)

    out = payments.take_payment(read_by_the_run, run_date=due)  # its charge lands after the close
    again = payments.take_payment(read_by_the_run, run_date=due)  # and a repeat changes nothing

    gateway = get_gateway()
    [charge] = gateway.charges_made(sub_id=sub.sub_id)
    [refund] = gateway.refunds_made()
    assert out.reason.startswith("refunded") and again.reason.startswith("refunded")
    assert refund["charge_id"] == charge["charge_id"] and refund["amount"] == charge["amount"]
    [ended] = access.get_subscriptions_by_account(sub.account_id)
    assert ended.PaidThroughDate < due.isoformat()
    [receipt] = [i for i in raw_partition(sub.account_id) if i["EntityType"]["S"] == "Receipt"]
    assert datetime.fromtimestamp(int(receipt["TTL"]["N"]), UTC).year == due.year + 10


def test_two_closes_at_once_refund_the_unused_days_once(local_tables) -> None:
    from billing.operations import payments
    from tests.builders import at_once

    due = date.today()
    [sub] = seed_due(1, due=due)
    access.create_account(sub.Email, account_id=sub.account_id)
    assert payments.take_payment(sub, run_date=due).status == "paid"
    mail.outbox.clear()

    results = at_once(lambda: data_rights.close_account(sub.account_id, today=due), times=3)

    assert sorted(r.closed_now for r in results) == [False, False, True]
    assert sum(len(r.cancelled) for r in results) == 1
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    [refund] = get_gateway().refunds_made()
    assert refund["charge_id"] == charge["charge_id"] and 0 < refund["amount"] < charge["amount"]
    assert len([m for m in mail.outbox if "closed" in m.subject]) == 1


def raw_shop_partition(pk: str, index: str | None = None) -> list[dict]:
    """Every shop item under ``pk`` (the table's, or GSI2's for a customer) as stored."""
    from shop.models import ShopItem

    name, key = ("GSI2", "GSI2-PK") if index else (None, "PK")
    client, items, start = dynamodb_client(), [], None
    while True:
        page = client.query(TableName=ShopItem.Meta.table_name, KeyConditionExpression="#k = :pk",
                            ExpressionAttributeNames={"#k": key}, ExpressionAttributeValues={":pk": {"S": pk}},
                            **({"IndexName": name} if name else {"ConsistentRead": True}),
                            **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def shop_with_orders(customer_id: str) -> tuple[str, str, str]:
    """A shipped-to order (paid, its shipment made), and one left waiting for its payment
    (the process died after placing it); returns their ids and the card's token."""
    from shop import access as shop_access
    from shop import faults
    from shop.checkout import CheckoutRequest, checkout, new_checkout_token
    from shop.fulfilment import create_shipments
    from shop.models import Address

    shop_access.create_warehouse("near", "Goteborg", Address(Country="Sweden", City="Goteborg", Street="Main",
                                                             ZipCode="41111"))
    shop_access.create_product("album", "Options Open", 10000, "SEK", "music")
    shop_access.put_stock("album", "near", 10)
    home = {"Country": "Sweden", "City": "Goteborg", "Street": "Slanbarsvagen", "Number": "34", "ZipCode": "41787"}
    token = get_gateway().tokenize_card("4242424242424242", 12, 2040, "123")

    def order() -> CheckoutRequest:
        return CheckoutRequest(token=new_checkout_token(), customer_id=customer_id, lines=(("album", 1),),
                               address=home, card=token)

    paid = checkout(order())
    create_shipments(paid.order_id)
    waiting = order()

    def die(step: str) -> None:
        if step == "placed":
            raise KeyboardInterrupt(step)  # a BaseException: the process dying after placing it

    faults.hook = die
    try:
        with pytest.raises(KeyboardInterrupt):
            checkout(waiting)
    finally:
        faults.hook = None
    return paid.order_id, waiting.token, token.token


def assert_no_personal_field(order_id: str, personal: tuple[str, ...], years: int) -> None:
    items = raw_shop_partition(f"o#{order_id}")
    assert {i["EntityType"]["S"] for i in items} >= {"order", "orderItem", "invoice", "payment"}
    for item in items:
        if item["EntityType"]["S"] == "invoice":
            issued = date.fromisoformat(item["IssuedAt"]["S"][:10])
            ttl = datetime.fromtimestamp(int(item["TTL"]["N"]), UTC).date()
            leap_day = (issued.month, issued.day) == (2, 29)  # kept to the 28th of a year without one
            assert ttl == issued.replace(year=issued.year + years, day=28 if leap_day else issued.day)
            continue
        assert not [p for p in personal if p in json.dumps(item)], item
        assert "ShippingAddress" not in item and "CardToken" not in item and "Address" not in item


def test_closing_erases_the_shop_orders_and_the_throttle_records_of_the_users_addresses(tables, settings) -> None:
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    from shop import access as shop_access
    from shop.models import OrderStatus
    from shop.reconcile import reconcile

    settings.RPAY_SELLER_COUNTRY = "IT"  # ten years
    pat = make_customer_with_history("pat@example.com")
    shop_access.create_customer(pat.account_id, "pat@example.com", "Pat Example")
    paid, waiting, token = shop_with_orders(pat.account_id)
    assert shop_access.get_shipment_by_order_id(paid)  # a shipment with the address on it
    # pat's failed log-ins from two addresses; someone else behind one of them; a stranger elsewhere
    for ip in ("198.51.100.4", "198.51.100.5"):
        AccessAttempt.objects.create(username="pat@example.com", ip_address=ip, user_agent="x",
                                     failures_since_start=1, get_data="", post_data="")
    AccessLog.objects.create(username="pat@example.com", ip_address="198.51.100.6", user_agent="x")
    AccessFailureLog.objects.create(username="flatmate@example.com", ip_address="198.51.100.6", user_agent="x")
    AccessAttempt.objects.create(username="flatmate@example.com", ip_address="198.51.100.5", user_agent="x",
                                 failures_since_start=3, get_data="", post_data="")
    AccessAttempt.objects.create(username="stranger@example.com", ip_address="192.0.2.1", user_agent="x",
                                 failures_since_start=1, get_data="", post_data="")

    data_rights.close_account(pat.account_id, today=date.today())

    personal = ("pat@example.com", "Pat Example", "Slanbarsvagen", "41787", token)
    assert_no_personal_field(paid, personal, 10)
    # the order waiting for its payment is left to the reconciliation, which erases it once settled
    assert shop_access.get_order_details_by_order_id(waiting).order.ShippingAddress is not None
    reconcile(older_than=timedelta(0))
    assert shop_access.get_order_details_by_order_id(waiting).order.Status != OrderStatus.PENDING_PAYMENT
    assert_no_personal_field(waiting, personal, 10)
    # nothing of the customer's is left anywhere under their key either (lines and invoices)
    for item in raw_shop_partition(f"c#{pat.account_id}", index="GSI2"):
        assert item["EntityType"]["S"] == "invoice" or not [p for p in personal if p in json.dumps(item)]
    # every throttle record of pat's addresses is gone, the flatmate's too; the stranger's kept
    for model in (AccessAttempt, AccessLog, AccessFailureLog):
        assert not model.objects.filter(ip_address__startswith="198.51.100.").exists()
    assert AccessAttempt.objects.filter(username="stranger@example.com").exists()
    # a second close finds nothing more to do
    data_rights.close_account(pat.account_id, today=date.today())
    assert_no_personal_field(paid, personal, 10)


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_readme_names_every_folder_and_file_of_the_zip(tables, language) -> None:
    """A refunded invoice puts its credit note in ``credit-notes/``: the README says what
    that folder is, as it does for ``data.json``, ``receipts/`` and itself."""
    import time_machine

    from tests.builders import paid_receipt

    # on the receipt's own day: the export keeps receipts still within their retention
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        receipt = paid_receipt()
        access.record_refund(receipt, refund_id="re_readme", amount=100, actor="staff")
        archive = unzip(receipt.account_id, language)
    tops = {name.split("/", 1)[0] + ("/" if "/" in name else "") for name in archive.namelist()}
    assert {"credit-notes/", "receipts/", "data.json", "README.txt"} <= tops
    readme = archive.read("README.txt").decode()
    for top in tops:
        assert f"{top}: " in readme, top


def test_the_closed_e_mail_lists_the_credit_notes_kept_with_the_receipts(tables) -> None:
    from billing.operations.refunds import refund_receipt

    pat = make_customer_with_history("pat@example.com")
    refund_receipt(pat.receipt, 300, request_id="goodwill-1", actor="staff@example.com", reason="goodwill")
    [note] = access.get_credit_notes_by_account(pat.account_id)
    mail.outbox.clear()

    data_rights.close_account(pat.account_id, today=date.today())

    [closing] = [m for m in mail.outbox if m.to == ["pat@example.com"] and "closed" in m.subject]
    html = closing.alternatives[0][0]
    for text in (closing.body, html):  # the credit note is kept for tax law as its receipt is: named
        assert pat.receipt.Number in text and note.Number in text
        assert "the credit notes that correct them" in text
