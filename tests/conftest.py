"""Shared fixtures: a fresh DynamoDB table per test, on moto or on DynamoDB Local.

Data-layer tests take ``table`` and run twice, once per engine (docs/DEVELOPMENT.md, "Tests");
page and command tests take ``moto_table`` for speed. ``ddb_requests`` counts the
DynamoDB operations made through botocore's event hooks.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime

import pytest
import time_machine

# moto and the local engine accept any credentials; never pick up a developer's real ones.
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)

from django.conf import settings as dj_settings  # noqa: E402
from django.utils import translation  # noqa: E402
from hypothesis import HealthCheck  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402
from moto import mock_aws  # noqa: E402

from billing.models import configure
from core.dynamo.engine import dynamodb_client
from core.dynamo.table import delete_table, ensure_table  # noqa: E402
from devtools.localengine import LocalEngine, free_port, start_local_engine  # noqa: E402
from devtools.localpostgres import LocalPostgres, start_local_postgres  # noqa: E402
from devtools.localpostgres import missing_reason as postgres_missing_reason  # noqa: E402
from tests import wallclock  # noqa: E402

# Under mutmut (`make mutate`) every mutant reruns each property test that reaches it:
# there, fewer examples and a fixed seed keep a mutant's run short and its verdict the
# same from run to run; no deadline or health checks, which mutmut's tracing and a loaded
# machine would trip. `make test` keeps hypothesis's own defaults. mutmut sets
# MUTANT_UNDER_TEST in its process (and the workers it forks) before pytest starts.
UNDER_MUTMUT = os.environ.get("MUTANT_UNDER_TEST") is not None
hypothesis_settings.register_profile("mutmut", max_examples=25, derandomize=True, database=None, deadline=None,
                                     suppress_health_check=list(HealthCheck))
if UNDER_MUTMUT:
    hypothesis_settings.load_profile("mutmut")
# Under mutmut, a test still running after this many seconds fails (pytest-timeout): a
# mutant that loops for ever (period_amount's ``while``) is then caught in the first,
# fastest test it hangs, instead of at mutmut's own limit (6x the CPU time of all the
# tests of the function: hours of wall time on a loaded machine). No test here takes a
# tenth of it; `make test` has no such limit.
MUTANT_TEST_TIMEOUT = 90


# The fixtures through which a test reaches Django's own database (users, sessions, the
# log-in throttle); pytest-django refuses the database to every other test ("Database
# access not allowed"), so ``-m django_database`` selects every test that can touch it:
# CI's second pass runs just those on PostgreSQL (tests/test_database_marker.py).
DJANGO_DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                            "live_server"}


def asks_for_a_database(marker: pytest.Mark | None) -> bool:
    """A ``django_db`` mark opens Django's database, unless it names none (``databases=[]``:
    the state machines use the mark only for pytest-django's settings)."""
    return marker is not None and marker.kwargs.get("databases", marker.args[2] if len(marker.args) > 2 else None) != []


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A test on the local engine is marked so, whichever fixture brings it in: ``-m "not
    # local_engine"`` (mutmut's runs, a machine without Java) then leaves it out.
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if {"local_engine", "local_table"} & fixtures:
            item.add_marker(pytest.mark.local_engine)
        if DJANGO_DATABASE_FIXTURES & fixtures or asks_for_a_database(item.get_closest_marker("django_db")):
            item.add_marker(pytest.mark.django_database)
    if UNDER_MUTMUT:
        for item in items:
            item.add_marker(pytest.mark.timeout(MUTANT_TEST_TIMEOUT, method="signal"))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None,
                                 tmp_path_factory: pytest.TempPathFactory,
                                 request: pytest.FixtureRequest) -> None:
    """Django's own test database (users and sessions) in a file, not in memory: for an
    in-memory SQLite database the live server's threads share one connection, so two
    requests at once (a customer's double click, tests/shop/test_browser_shop.py) collide in
    it ("cannot start a transaction within a transaction", a 400 page). With a file each
    thread has its own connection, and SQLite's lock orders their writes, as in production."""
    database = dj_settings.DATABASES["default"]
    if TEST_DATABASE == "postgres":
        # Django's tables on a real PostgreSQL server (CI's `TEST_DATABASE=postgres make test`, make test-postgres).
        _point_at_postgres(database, request.getfixturevalue("postgres_server"))
    if database["ENGINE"].endswith("sqlite3"):
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("django-db") / "test.sqlite3")


# --- PostgreSQL (devtools/localpostgres.py) --------------------------------------------
# TEST_DATABASE=postgres runs every test's Django tables (users, sessions, the log-in
# throttle) on a throw-away PostgreSQL server started for the run; the default is SQLite.
# Tests that need PostgreSQL whatever TEST_DATABASE says (two gunicorns on one database,
# migrations) take ``postgres_server``: skipped with the reason where PostgreSQL is not
# installed, failed instead with REQUIRE_POSTGRES=1 (CI).
TEST_DATABASE = os.environ.get("TEST_DATABASE", "sqlite").lower()
if TEST_DATABASE not in ("sqlite", "postgres"):
    raise pytest.UsageError(f"TEST_DATABASE={TEST_DATABASE!r}: use sqlite (the default) or postgres")


def postgres_unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_POSTGRES") == "1" or TEST_DATABASE == "postgres":
        pytest.fail(f"PostgreSQL is required here (REQUIRE_POSTGRES=1 or TEST_DATABASE=postgres) but {reason}",
                    pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    """One PostgreSQL server per test run, in a temporary folder on a free port."""
    reason = postgres_missing_reason()
    if reason:
        postgres_unavailable(reason)
    server = start_local_postgres()
    yield server
    server.stop()


def _point_at_postgres(database: dict, server: LocalPostgres) -> None:
    """Turn the settings' default database into ``server``'s (pytest-django then creates
    test_rpay there). In place: Django's connection handler holds this very dict."""
    import dj_database_url
    from django.db import connections

    parsed = dj_database_url.parse(server.url("rpay"), conn_max_age=0, conn_health_checks=True)
    database.update(parsed)
    database["OPTIONS"] = parsed.get("OPTIONS", {})
    database.setdefault("TEST", {})["NAME"] = "test_rpay"
    # A connection opened before this (an import that touched the database) is SQLite's.
    connections.close_all()
    with contextlib.suppress(AttributeError):
        del connections["default"]


ENGINES = ["moto", "ddblocal"]
REGION = "us-east-1"
_table_numbers = itertools.count()


@pytest.fixture(scope="session")
def local_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEngine]:
    """One DynamoDB Local per test run, on a free port, in memory (its log in a temporary folder)."""
    log = tmp_path_factory.mktemp("dynamodb-local") / "engine.log"
    engine = start_local_engine(free_port(), None, log_file=log)
    yield engine
    engine.stop()


_MOTO_LOCK = threading.RLock()


def _serialize_moto_requests() -> None:
    """moto is not thread-safe, and the batches' workers are threads. A query on an index or
    a scan walks every partition, and an answer is written from the stored items themselves
    (``Item.to_json`` walks an item's attributes): both break when another thread adds an
    item, or an attribute to an item, meanwhile ("dictionary changed size during
    iteration", seen once in a worker of a Stripe payment run, before its charge). DynamoDB
    applies and answers each request whole, so on moto each request takes its turn from
    its parsing to its answer, not only inside the backend (the answer used to be written
    after the backend let go). Concurrency itself is tested on DynamoDB Local.
    tests/core/test_moto_threads.py races readers against writers of one item."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    lock = _MOTO_LOCK
    if not getattr(DynamoHandler.call_action, "serialized", False):
        handle = DynamoHandler.call_action

        def call_action(self, _handle=handle):
            with lock:
                return _handle(self)

        call_action.serialized = True
        DynamoHandler.call_action = call_action
    # The backend's own methods too, for the tests that call moto's backend directly.
    for name in ("transact_write_items", "put_item", "update_item", "delete_item", "get_item", "query", "scan"):
        real = getattr(DynamoDBBackend, name)
        if getattr(real, "serialized", False):
            continue

        def serialized(self, *args, _real=real, **kwargs):
            with lock:
                return _real(self, *args, **kwargs)

        serialized.serialized = True
        setattr(DynamoDBBackend, name, serialized)


def _roll_back_moto_transactions_item_by_item() -> None:
    """moto keeps a TransactWriteItems all-or-nothing by deep-copying each table it touches
    before it starts, whatever the table's size: with a few hundred items a transaction
    costs a third of a second (85% of ``seed_demo``'s time on moto), and the suite spends
    minutes in it. Here a transaction copies only the items it names, and a cancelled one
    puts those back: the same outcome (the whole transaction or nothing), as DynamoDB's. The
    requests already take turns (above), so no other request sees the table meanwhile."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    real = DynamoDBBackend.transact_write_items
    if getattr(real, "item_by_item", False):
        return

    def keys_of(table: Table, op: dict) -> tuple:
        key = op["Item"] if "Item" in op else op["Key"]
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        return hash_value, range_value

    def transact_write_items(self, transact_items, *args, **kwargs):
        before = []
        for entry in transact_items:
            with contextlib.suppress(Exception):  # a malformed operation fails before it writes
                op = next(iter(entry.values()))
                table = self.tables[op["TableName"]]
                hash_value, range_value = keys_of(table, op)
                before.append((table, hash_value, range_value,
                               copy.deepcopy(table.get_item(hash_value, range_value))))
        Table.__deepcopy__ = lambda table, memo: table  # moto's whole-table backup: not needed
        try:
            return real(self, transact_items, *args, **kwargs)
        except Exception:
            for table, hash_value, range_value, item in reversed(before):
                if range_value is None:
                    table.items.pop(hash_value, None)
                    if item is not None:
                        table.items[hash_value] = item
                else:
                    table.items[hash_value].pop(range_value, None)
                    if item is not None:
                        table.items[hash_value][range_value] = item
            raise
        finally:
            del Table.__deepcopy__

    transact_write_items.item_by_item = True
    DynamoDBBackend.transact_write_items = transact_write_items


# The item operations whose answers moto writes straight as JSON (below).
_ITEM_OPERATIONS = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                    "BatchWriteItem", "TransactWriteItems", "TransactGetItems"}


def _without_nones(value):
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


def _answer_moto_item_operations_as_json() -> None:
    """moto 5.2 writes every answer through a generic serializer that walks the operation's
    output shape member by member: a third of a money state machine's time on moto went
    there. An item operation's answer is already DynamoDB's JSON (items as attribute-value
    maps, counts, keys), so for those it is written as it is; every other operation (and
    every error) still goes through moto's serializer. RPAY_CHECK_MOTO_JSON=1 writes both
    and fails on any difference (tests/core/test_moto_transactions.py runs it so)."""
    from moto.dynamodb.responses import DynamoResult

    real = DynamoResult.execute_result
    if getattr(real, "as_json", False):
        return

    def execute_result(self, context):
        if context.operation_model.name not in _ITEM_OPERATIONS:
            return real(self, context)
        members = context.operation_model.output_shape.members  # what DynamoDB answers, and no more
        answer = (200, {"Content-Type": "application/x-amz-json-1.0"},
                  json.dumps({k: _without_nones(v) for k, v in self.result.items() if k in members and v is not None}))
        if os.environ.get("RPAY_CHECK_MOTO_JSON") == "1":
            status, headers, body = real(self, context)
            assert (status, headers.get("Content-Type"), json.loads(body)) == (
                answer[0], answer[1]["Content-Type"], json.loads(answer[2])), context.operation_model.name
        return answer

    execute_result.as_json = True
    DynamoResult.execute_result = execute_result


def _sort_moto_items_by_their_values() -> None:
    """moto answers every Query (of the table or an index) and Scan by first sorting every
    item of the table by its keys, compared as its ``DynamoType`` objects, whose every
    comparison converts both values again: with the demo's few thousand items a Query cost
    80 ms, most of it in those conversions. The same order (the keys' values, as
    ``DynamoType.__lt__`` compares them), each key converted once."""
    from moto.dynamodb.models.table import Table

    if getattr(Table.all_items, "by_values", False):
        return

    def all_items(self):
        items = [item for hash_set in self.items.values()
                 for item in (hash_set.values() if self.range_key_attr else [hash_set])]
        return sorted(items, key=lambda x: (x.hash_key.cast_value, x.range_key.cast_value) if x.range_key
                      else x.hash_key.cast_value)

    all_items.by_values = True
    Table.all_items = all_items


class _TableSeenByAQuery:
    """A moto table as its ``Table.query`` sees it: the same table, but ``all_items`` is
    only the items the query can match (below)."""

    def __init__(self, table, items: list) -> None:
        self._table, self._items = table, items

    def __getattr__(self, name: str):
        return getattr(self._table, name)

    def all_items(self) -> list:
        return self._items


def _query_moto_partitions_directly() -> None:
    """moto answers a Query by sorting every item of the table (``all_items``) and then
    keeping the partition asked for: with the demo's items, 85 ms a Query. A Query of the
    table needs only its partition (``Table.items`` is keyed by the partition key), and
    either kind of Query sorts what it keeps itself (by the range key, or by the index's
    keys and the table's), so the whole table's order is not needed: the same answer, in
    the same order, pages and all. Scan still walks the sorted table."""
    from moto.dynamodb.models.table import Table

    real = Table.query
    if getattr(real, "by_partition", False):
        return

    def query(self, hash_key, *args, **kwargs):
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        if index_name:
            items = [item for hash_set in self.items.values()
                     for item in (hash_set.values() if self.range_key_attr else [hash_set])]
        else:
            partition = self.items.get(hash_key) if hash_key is not None else None
            items = [] if partition is None else (
                list(partition.values()) if self.range_key_attr else [partition])
        return real(_TableSeenByAQuery(self, items), hash_key, *args, **kwargs)

    query.by_partition = True
    Table.query = query


def _share_botocores_models() -> None:
    """PynamoDB makes a botocore session for each thread of each connection, and botocore
    loads and parses its JSON models (the endpoints, DynamoDB's API) once per session: a
    quarter of a second each. A test configures the engine anew (a connection per table),
    and a batch run's every worker thread makes its own: the suite spent about a minute
    of each worker's time parsing the same files. Here a thread keeps its session from one
    connection to the next (a session is not for two threads at once: PynamoDB's reason for
    one a thread), and every session shares one loader, which caches what it parsed. Each
    client still has its own event handlers (the request counters register on a client).
    """
    import botocore.loaders
    import botocore.session
    import pynamodb.connection.base as pynamodb_connection

    loader = botocore.loaders.create_loader()
    mine = threading.local()

    def get_session() -> botocore.session.Session:
        if getattr(mine, "session", None) is None:
            mine.session = botocore.session.get_session()
            mine.session.register_component("data_loader", loader)
        return mine.session

    pynamodb_connection.get_session = get_session


_roll_back_moto_transactions_item_by_item()
_answer_moto_item_operations_as_json()
_serialize_moto_requests()
_sort_moto_items_by_their_values()
_query_moto_partitions_directly()
_share_botocores_models()


@contextmanager
def table_on(engine: str, request: pytest.FixtureRequest, settings) -> Iterator[str]:
    # DynamoDB Local, like DynamoDB, wants table names of 3-255 characters.
    name = f"rpay_test_{os.getpid()}_{next(_table_numbers)}"
    settings.DYNAMODB_TABLE = name
    if engine == "moto":
        with mock_aws():
            settings.DYNAMODB_ENDPOINT = None
            configure(table_name=name, region=REGION, host=None, max_retry_attempts=1)
            ensure_table()
            yield engine
        return
    local = request.getfixturevalue("local_engine")
    settings.DYNAMODB_ENDPOINT = local.endpoint
    configure(table_name=name, region=REGION, host=local.endpoint, max_retry_attempts=1)
    ensure_table()
    try:
        yield engine
    finally:
        delete_table()


@pytest.fixture(params=ENGINES)
def table(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """A fresh table on each engine in turn; yields the engine's name."""
    with table_on(request.param, request, settings) as engine:
        yield engine


@pytest.fixture
def moto_table(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """A fresh table on moto only (pages, forms, commands)."""
    with table_on("moto", request, settings) as engine:
        yield engine


@pytest.fixture
def local_table(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    """A fresh table on DynamoDB Local only (concurrency, transactions, real HTTP)."""
    with table_on("ddblocal", request, settings) as engine:
        yield engine


@pytest.fixture(autouse=True)
def gateway_ledger(settings, tmp_path) -> str:
    """Each test gets its own simulated-gateway ledger (never the developer's var/)."""
    settings.PAYMENT_GATEWAY_LEDGER = str(tmp_path / "gateway-ledger.sqlite3")
    settings.PAYMENT_GATEWAY_LATENCY_MS = 0
    return settings.PAYMENT_GATEWAY_LEDGER


class RequestCounter:
    """Counts DynamoDB operations by name, from botocore's ``before-call`` event."""

    def __init__(self) -> None:
        self.ops: list[str] = []

    def __call__(self, model, **kwargs) -> None:
        self.ops.append(model.name)

    @property
    def total(self) -> int:
        return len(self.ops)

    def by_name(self) -> Counter:
        return Counter(self.ops)

    def reset(self) -> None:
        self.ops.clear()


@pytest.fixture
def ddb_requests() -> Iterator[RequestCounter]:
    """Use after a table fixture: counts every request the entities make from now on."""
    counter = RequestCounter()
    events = dynamodb_client().meta.events
    events.register("before-call.dynamodb", counter, unique_id="rpay-request-counter")
    yield counter
    events.unregister("before-call.dynamodb", unique_id="rpay-request-counter")


# --- the cast --------------------------------------------------------------------------
# One set of people and products every page test can ask for by name (builders in
# tests/builders.py): ``products`` (three on sale, one retired), ``customer`` (Ann) and
# ``other_customer`` (Bob), each logged in through the real log-in page.


@pytest.fixture(autouse=True)
def default_language() -> Iterator[None]:
    """Each test starts in English and leaves no language behind: LocaleMiddleware
    activates a request's language in the thread and nothing deactivates it, so an
    Italian page in one test made the next test's e-mails Italian."""
    translation.activate(dj_settings.LANGUAGE_CODE)
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def wall_clock_days(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Day constants of tests that meet the real clock are read when each such test starts
    (tests/wallclock.py): a run that crosses midnight must not compare yesterday with today."""
    if wallclock.wanted_by(request):
        wallclock.refresh(monkeypatch)


# RPAY_TEST_DAY=2028-02-29 (make test-days): a test that builds dates from today runs on
# that day, so a date that breaks only on some days of the year (a leap day, a month's or a
# year's end, a long month name) breaks in CI, not on the day it comes. Its clock starts
# at noon UTC and runs. Not for a test that meets another process's clock (localstripe,
# a live server, a browser, DynamoDB Local, PostgreSQL): those keep the machine's day.
# Several days, comma-separated, run each test once a day in one session (one start of
# the workers and their engines, not one a day).
TEST_DAYS = [day for day in os.environ.get("RPAY_TEST_DAY", "").split(",") if day]
OTHER_CLOCKS = {"localstripe", "stripe_gateway", "live_server", "local_engine", "local_table", "postgres_server"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if len(TEST_DAYS) > 1 and "test_day" in metafunc.fixturenames:
        metafunc.parametrize("test_day", TEST_DAYS, indirect=True, ids=[f"day={day}" for day in TEST_DAYS])


@pytest.fixture(autouse=True)
def test_day(request: pytest.FixtureRequest) -> Iterator[None]:
    day_text = getattr(request, "param", TEST_DAYS[0] if TEST_DAYS else None)
    if not day_text or OTHER_CLOCKS & set(request.fixturenames) or request.node.get_closest_marker("browser"):
        yield
        return
    day = date.fromisoformat(day_text)
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=True):
        yield


@pytest.fixture(autouse=True)
def fast_hashing(settings) -> None:
    # PBKDF2 at production strength costs seconds per test on a shared 2-core box.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def products(moto_table) -> dict:
    from billing import access

    made = {
        "NEWS-DAILY": access.create_product("NEWS-DAILY", "Daily News", 999, "USD"),
        "TEA-JP": access.create_product("TEA-JP", "Tea from Japan", 1500, "JPY"),
        "GYM": access.create_product("GYM", "City Gym", 4500, "GBP"),
        "OLD-MAG": access.create_product("OLD-MAG", "Old Magazine", 300, "USD"),
    }
    made["OLD-MAG"] = access.retire_product("OLD-MAG")
    return made


@pytest.fixture
def customer(db, moto_table, products):
    from tests.builders import make_customer

    return make_customer("ann@example.com")


@pytest.fixture
def shop_table_too(moto_table, settings):
    """The shop's table on moto beside the billing one: for billing tests that reach the
    shop (an account's close forgets its shop customer; the shop's pages)."""
    from core.dynamo.table import ensure_table
    from shop.models import ShopItem, configure

    before = ShopItem.Meta.table_name
    settings.SHOP_DYNAMODB_TABLE = "shop_beside_billing"
    configure(table_name="shop_beside_billing")
    ensure_table(model=ShopItem)
    yield
    configure(table_name=before)


@pytest.fixture
def other_customer(db, moto_table, products):
    from tests.builders import make_customer

    return make_customer("bob@example.com")


# Browser fixtures (Playwright + Debian's Chromium) live in tests/browser.py, the Stripe
# ones (localstripe, the Stripe gateway) in tests/stripe_server.py.
# tests/ddb_operations.py records the DynamoDB operations of the run against deploy/aws's IAM policies;
# tests/system_packages.py says which system packages are missing (their tests skip).
pytest_plugins = ["tests.browser", "tests.stripe_server", "tests.ddb_operations", "tests.system_packages"]


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The pauses the payment path would sleep between a charge's attempts, kept instead of
    slept (billing/operations/payments.py's retries: 0.2 s, then 0.4 s)."""
    from billing.operations import payments

    slept: list[float] = []
    monkeypatch.setattr(payments.time, "sleep", slept.append)
    return slept
