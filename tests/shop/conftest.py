"""Shop fixtures: a fresh billing table and shop table on each engine that has transactions.

``shop_table`` mirrors ``table`` of tests/conftest.py (it reuses ``table_on``) and adds
the shop's table on the same engine. dynalite has no transactions, so the shop runs on
moto and on the real local engine (DynamoDB Local) once tests/conftest.py offers it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from core.dynamo.table import delete_table, ensure_table
from shop.models import ShopItem, configure
from tests.conftest import ENGINES, table_on

# Engines with transactions: everything but dynalite.
SHOP_ENGINES = [engine for engine in ENGINES if engine != "dynalite"]
REAL_ENGINES = [engine for engine in SHOP_ENGINES if engine != "moto"]
_numbers = itertools.count()


def _shop_table(engine: str, request: pytest.FixtureRequest, settings) -> Iterator[str]:
    before = ShopItem.Meta.table_name
    with table_on(engine, request, settings):
        name = f"shop_test_{os.getpid()}_{next(_numbers)}"
        settings.SHOP_DYNAMODB_TABLE = name
        configure(table_name=name)
        ensure_table(model=ShopItem)
        try:
            yield engine
        finally:
            if engine != "moto":
                delete_table(model=ShopItem)
            configure(table_name=before)  # later tests find the shop where settings say


@pytest.fixture(params=SHOP_ENGINES)
def shop_table(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """Fresh billing and shop tables on moto, then on the real local engine; yields the engine."""
    yield from _shop_table(request.param, request, settings)


@pytest.fixture(params=REAL_ENGINES or [pytest.param("none", marks=pytest.mark.skip(
    reason="needs the real local engine (DynamoDB Local), not in tests/conftest.py yet"))])
def real_shop_table(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """The shop's tables on the real local engine only: concurrency with real threads
    (moto's transactions snapshot and restore whole tables, so they are not atomic
    between threads)."""
    yield from _shop_table(request.param, request, settings)


@pytest.fixture
def seeded(shop_table: str) -> str:
    """The seed's sample data loaded into fresh tables."""
    from shop.access import load_seed_sample

    assert load_seed_sample()
    return shop_table


@pytest.fixture(autouse=True)
def _no_warehouses_kept() -> Iterator[None]:
    """Each test reads warehouses afresh: the checkout keeps their addresses for a minute."""
    from shop.access.catalog import forget_warehouses

    forget_warehouses()
    yield
    forget_warehouses()
