"""The one DynamoDB engine every table of the site sits on, and the only module that
touches PynamoDB's private API.

PynamoDB has no public API for three things we need (its issues #1245 and #422): a
model caches its connection in ``_connection`` on first use (so a changed ``Meta`` needs
the cache dropped); each class would otherwise open its own connection; and a
transaction or a raw ``UpdateItem`` needs the connection object. Sharing one
``Connection`` (one botocore client, one HTTP pool) lets the batch workers share the
pool and lets request counting hook a single client. The workaround lives here, and
nowhere else (tests/test_code_shape.py checks it); the pinned PynamoDB version is in
requirements.txt.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

from pynamodb.connection import Connection, TableConnection
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

# The base model whose connection is the engine (the first table configured: billing's).
_engine_owner: type[Model] | None = None


def configure(
    base: type[Model],
    entities: Iterable[type[Model]],
    *,
    table_name: str,
    region: str,
    host: str | None,
    max_retry_attempts: int = 5,
    max_pool_connections: int = 64,
    connect_timeout_seconds: int = 3,
    read_timeout_seconds: int = 10,
) -> None:
    """Point ``base`` and its entities at a table and endpoint, dropping cached
    connections; ``base``'s connection becomes the engine other tables share.

    With an endpoint (DynamoDB Local, another emulator) and no AWS credentials in the
    environment, dummy credentials are used: local engines accept any.
    """
    global _engine_owner
    meta = base.Meta
    meta.table_name = table_name
    meta.region = region
    meta.host = host
    meta.max_retry_attempts = max_retry_attempts
    meta.max_pool_connections = max_pool_connections
    meta.connect_timeout_seconds = connect_timeout_seconds
    meta.read_timeout_seconds = read_timeout_seconds
    if host and not os.environ.get("AWS_ACCESS_KEY_ID") and not os.environ.get("AWS_PROFILE"):
        meta.aws_access_key_id = "local"
        meta.aws_secret_access_key = "local"
    else:
        meta.aws_access_key_id = None
        meta.aws_secret_access_key = None
    entities = tuple(entities)
    for cls in (base, *entities):
        cls._connection = None
    shared = base._get_connection()
    for cls in entities:
        cls._connection = shared
    _engine_owner = base


def configure_shared_table(base: type[Model], entities: Iterable[type[Model]], *, table_name: str) -> None:
    """Point another table's models (a subclass of ``OnSharedEngine``) at their table on the
    engine; call it after ``configure`` (start-up, tests)."""
    base.Meta.table_name = table_name
    for cls in (base, *entities):
        cls._connection = None


def engine() -> Connection:
    """The one PynamoDB ``Connection`` every table uses."""
    if _engine_owner is None:
        raise RuntimeError("the DynamoDB engine is not configured (core.dynamo.engine.configure)")
    return _engine_owner._get_connection().connection


def dynamodb_client() -> Any:
    """The botocore client every table uses (for event hooks: request counting)."""
    return engine().client


def table_connection(model: type[Model]) -> TableConnection:
    """``model``'s table connection, for the requests PynamoDB's ``Model`` cannot shape
    (an ``UpdateItem`` that asks for ``UPDATED_NEW``)."""
    return model._get_connection()


def transact_write(**kwargs: Any) -> TransactWrite:
    """A ``TransactWrite`` on the engine (items of any table on it)."""
    return TransactWrite(connection=engine(), **kwargs)


def table_schema(model: type[Model]) -> dict[str, Any]:
    """The table ``model.create_table`` would make: keys, attributes and indexes."""
    return model._get_schema()


class OnSharedEngine(Model):
    """The base of a second table on the engine: its models share the engine's
    ``Connection`` (rebuilt whenever ``configure`` made a new one: tests switch engines)."""

    @classmethod
    def _get_connection(cls) -> TableConnection:
        shared = engine()
        table = cls.__dict__.get("_connection")
        if table is None or table.connection is not shared or table.table_name != cls.Meta.table_name:
            cls._connection = None
            table = super()._get_connection()
            with contextlib.suppress(ValueError):  # already known to this engine
                shared.add_meta_table(table.get_meta_table())
            table.connection = shared
        return table
