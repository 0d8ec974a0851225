"""Django's tables on a real PostgreSQL server, as production runs them: two gunicorn
processes share one database (sessions and the log-in throttle included), and the
migrations run on it from an empty database and from the previous release's schema.

Each test starts what it needs in its own processes (devtools/prodsite.py): the
production settings (DJANGO_DEBUG=0) on PostgreSQL (devtools/localpostgres.py) and
DynamoDB Local. Skipped with the reason where PostgreSQL is not installed, failed with
REQUIRE_POSTGRES=1 (CI).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.localengine import LocalEngine
from devtools.localpostgres import LocalPostgres
from devtools.prodsite import Visitor, gunicorns, mailed_link, manage, production_env

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "a-long-Password-2026"
BOSS = "boss@example.com"
_databases = itertools.count()


def sign_up(env: dict[str, str], server: str, visitor: Visitor, address: str):
    """Sign up on ``server`` as a visitor does: the page, the mailed link, the password."""
    asked = visitor.post(f"{server}/signup/", {"email": address})
    assert asked.status == 200, asked.text[:2000]
    return visitor.post(server + mailed_link(env, address), {"password1": PASSWORD, "password2": PASSWORD})


def fresh_database(server: LocalPostgres, purpose: str) -> str:
    name = f"{purpose}_{os.getpid()}_{next(_databases)}"
    server.create_database(name)
    return server.url(name)


@pytest.fixture(scope="module")
def site_env(postgres_server: LocalPostgres, local_engine: LocalEngine,
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The production environment on a new database and new tables, migrated and set up,
    with a superuser (BOSS); shared by this module's tests, each with its own people."""
    suffix = f"{os.getpid()}_{next(_databases)}"
    folder = tmp_path_factory.mktemp("two-webs")
    env = production_env(database_url=fresh_database(postgres_server, "web"),
                         dynamodb_endpoint=local_engine.endpoint, table=f"rpay_web_{suffix}", folder=folder)
    manage(env, "migrate", "--no-input")
    manage(env, "setup_dynamodb")
    manage({**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}, "createsuperuser", "--no-input",
           "--username", BOSS, "--email", BOSS)
    return env


@pytest.fixture(scope="module")
def two_webs(site_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two gunicorn processes (one worker each) on that one database."""
    with gunicorns(site_env, tmp_path_factory.mktemp("gunicorn-logs"), 2) as (one, other):
        yield one.url, other.url


def test_the_suite_runs_on_the_database_it_was_asked_for(db) -> None:
    """TEST_DATABASE=postgres (CI's second pass) really puts Django's tables on PostgreSQL."""
    from django.db import connection

    expected = "postgresql" if os.environ.get("TEST_DATABASE", "sqlite").lower() == "postgres" else "sqlite"
    assert connection.vendor == expected


def test_a_session_started_on_one_process_is_known_to_the_other(two_webs, site_env) -> None:
    one, other = two_webs
    pat = Visitor()
    signed_up = sign_up(site_env, one, pat, "pat@example.com")
    assert signed_up.status == 302, signed_up.text[:2000]
    session = pat.cookie("sessionid")
    assert session

    portal = pat.get(f"{other}/")
    assert portal.status == 200
    assert "pat@example.com" in portal.text
    assert pat.get(f"{other}/receipts/").status == 200
    assert pat.cookie("sessionid") == session

    # Logging out on one process ends the session on the other too: it lives in PostgreSQL.
    assert pat.post(f"{other}/logout/", {}, form_page=f"{other}/").status == 302
    assert pat.get(f"{one}/receipts/").status == 302


def test_a_log_in_on_one_process_opens_the_staff_pages_on_the_other(two_webs) -> None:
    one, other = two_webs
    boss = Visitor()
    logged_in = boss.post(f"{one}/login/", {"username": BOSS, "password": PASSWORD})
    assert logged_in.status == 302, logged_in.text[:2000]
    staff = boss.get(f"{other}/admin/staff/")
    assert staff.status == 200, staff.text[:2000]
    assert boss.get(f"{other}/admin/staff/upcoming/").status == 200
    assert Visitor().get(f"{other}/admin/staff/").status == 302  # a stranger goes to the log-in


def test_the_log_in_throttle_counts_failures_on_both_processes(two_webs, site_env) -> None:
    one, other = two_webs
    assert sign_up(site_env, one, Visitor(), "sam@example.com").status == 302
    limit = 5  # LOGIN_FAILURE_LIMIT's default
    assert "LOGIN_FAILURE_LIMIT" not in site_env
    for attempt in range(limit):
        server = (one, other)[attempt % 2]  # alternate: neither process alone reaches the limit
        answer = Visitor().post(f"{server}/login/", {"username": "sam@example.com", "password": "wrong"})
        # The failure that reaches the limit is answered with the lock-out page itself.
        assert answer.status == (429 if attempt == limit - 1 else 200), f"failure {attempt + 1}: {answer.status}"
    for server in (one, other):
        answer = Visitor().post(f"{server}/login/", {"username": "sam@example.com", "password": PASSWORD})
        assert answer.status == 429, f"{server} let the right password in after {limit} failures"


# --- migrations --------------------------------------------------------------------------


# Every app with migrations but billing (the shop keeps its data in DynamoDB only).
OTHER_APPS = ["contenttypes", "auth", "admin", "sessions", "axes"]


def billing_migrations() -> list[str]:
    return sorted(p.stem for p in (ROOT / "billing" / "migrations").glob("0*.py"))


def test_migrate_from_an_empty_postgresql_database(postgres_server, tmp_path) -> None:
    env = production_env(database_url=fresh_database(postgres_server, "empty"), dynamodb_endpoint="",
                         table="unused", folder=tmp_path)
    manage(env, "migrate", "--no-input")
    manage(env, "migrate", "--check")  # nothing left to apply
    manage(env, "makemigrations", "--check", "--dry-run")  # and the models match them


def test_migrate_from_the_previous_release_schema(postgres_server, tmp_path) -> None:
    """The previous release's schema: billing at the migration before its newest (the
    packages are pinned, so every other app's is the same), with a user in it; then
    forward. The user and the new migration's roles are there after it."""
    env = production_env(database_url=fresh_database(postgres_server, "upgrade"), dynamodb_endpoint="",
                         table="unused", folder=tmp_path)
    *_, previous, newest = billing_migrations()
    for app in OTHER_APPS:
        manage(env, "migrate", app, "--no-input")
    manage(env, "migrate", "billing", previous, "--no-input")
    manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
           "get_user_model().objects.create_user('old@example.com', password='x-Old-password-1')")
    assert f"[ ] {newest}" in manage(env, "showmigrations", "billing")
    manage(env, "migrate", "--no-input")
    manage(env, "migrate", "--check")
    left = manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
                  "from django.contrib.auth.models import Group; "
                  "print(get_user_model().objects.filter(username='old@example.com').count(), "
                  "sorted(Group.objects.values_list('name', flat=True)))")
    # the user kept, and the staff roles, the admin role (webhooks, API keys) among them
    assert left.strip().splitlines()[-1] == "1 ['admin', 'catalog', 'finance', 'support']"


# --- without PostgreSQL ---------------------------------------------------------------------


def test_without_postgresql_its_tests_skip_with_the_reason_unless_required(monkeypatch) -> None:
    import devtools.localpostgres as localpostgres
    from tests import conftest

    monkeypatch.setattr(localpostgres, "find_bin_dir", lambda: None)
    reason = localpostgres.missing_reason()
    assert reason == "PostgreSQL is not installed (apt-get install postgresql)"
    monkeypatch.setattr(conftest, "TEST_DATABASE", "sqlite")
    monkeypatch.delenv("REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        conftest.postgres_unavailable(reason)
    monkeypatch.setenv("REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="REQUIRE_POSTGRES=1 .* but PostgreSQL is not installed"):
        conftest.postgres_unavailable(reason)
