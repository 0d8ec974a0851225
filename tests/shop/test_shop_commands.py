"""setup_dynamodb, export_workbench_model and seed_demo know the shop's table."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from billing import access as billing_access
from core.dynamo.table import delete_table, describe_table
from shop import access
from shop.models import ENTITIES, ShopItem


def run(*args: str, **kwargs) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, **kwargs)
    return out.getvalue()


@pytest.mark.django_db(databases=[])
def test_setup_dynamodb_creates_both_tables_idempotently(shop_table) -> None:
    first = run("setup_dynamodb")
    name = ShopItem.Meta.table_name
    assert f"{name} already exists (the shop's table)" in first
    delete_table(model=ShopItem)
    assert f"{name} created (the shop's table)" in run("setup_dynamodb")
    assert f"{name} already exists (the shop's table)" in run("setup_dynamodb")
    description = describe_table(model=ShopItem)
    indexes = {i["IndexName"]: i for i in description["GlobalSecondaryIndexes"]}
    assert {n: [k["AttributeName"] for k in i["KeySchema"]] for n, i in indexes.items()} == {
        "GSI1": ["GSI1-PK", "GSI1-SK"], "GSI2": ["GSI2-PK", "GSI2-SK"]}
    assert {i["Projection"]["ProjectionType"] for i in indexes.values()} == {"ALL"}
    assert "GSI1: keys GSI1-PK (HASH), GSI1-SK (RANGE); projection ALL" in first


def test_export_shop_model_matches_the_live_table(shop_table, ddb_requests) -> None:
    model = json.loads(run("export_workbench_model", table="shop"))
    assert ddb_requests.total == 0
    (table,) = model["DataModel"]
    live = describe_table(model=ShopItem)
    assert table["TableName"] == live["TableName"]
    live_gsis = {g["IndexName"]: [k["AttributeName"] for k in g["KeySchema"]] for g in live["GlobalSecondaryIndexes"]}
    assert {g["IndexName"]: [g["KeyAttributes"]["PartitionKey"]["AttributeName"],
                             g["KeyAttributes"]["SortKey"]["AttributeName"]]
            for g in table["GlobalSecondaryIndexes"]} == live_gsis
    facets = {f["FacetName"]: f for f in table["TableFacets"]}
    assert set(facets) == {"customer", "product", "warehouse", "warehouseItem", "order", "orderItem", "invoice",
                           "payment", "shipment", "shipmentItem", "discountCode", "giftCard", "giftCardEntry",
                           "pendingAction"}
    for entity in ENTITIES:
        for raw in facets[entity.get_attributes()["EntityType"].get_discriminator(entity)]["TableData"]:
            item = ShopItem.from_raw_data(raw)
            assert type(item) is entity
            for attr in entity.index_keys():  # every sample carries its index keys
                assert getattr(item, attr), (entity, attr)
    both = json.loads(run("export_workbench_model", table="all"))
    assert [t["TableName"] for t in both["DataModel"]] == [json.loads(run("export_workbench_model"))[
        "DataModel"][0]["TableName"], live["TableName"]]


@pytest.mark.django_db
def test_seed_demo_loads_the_seed_sample_once(shop_table) -> None:
    out = run("seed_demo")
    assert "the seed's sample loaded" in out and "WELCOME10" in out
    assert "log in as samaneh@example.com" in out
    order = access.get_order_details_by_order_id("12345")
    assert order.order.ChargeId and order.order.ChargeId.startswith("ch_sim_")
    # the seed's customer is an rpay account with the seed's id, and can log in
    user = authenticate(username="samaneh@example.com", password="customer-demo-2026")
    assert user is not None and billing_access.get_account_id_for_user(user.pk) == "12345"
    assert access.get_customer_by_customer_id("12345").Email == "samaneh@example.com"
    again = run("seed_demo")
    assert "sample loaded" not in again and "log in as" not in again
    assert [o.order_id for o in access.get_orders_by_customer_id("12345")] == ["12345"]
    assert access.get_discount_code("welcome10").PercentOff == 10


@pytest.mark.django_db
def test_seed_demo_without_the_shop_table_says_so(shop_table) -> None:
    delete_table(model=ShopItem)
    assert "shop: its table is missing (run setup_dynamodb); not seeded" in run("seed_demo")
