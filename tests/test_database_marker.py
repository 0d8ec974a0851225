"""CI's PostgreSQL pass runs only the tests marked ``django_database`` (tests/conftest.py
marks each test that asks for Django's database through a fixture). That selection is
complete only while no unmarked test can reach the database: these tests hold that."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

TESTS = Path(__file__).resolve().parent


def test_an_unmarked_test_cannot_touch_djangos_database(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("django_database") is None
    with pytest.raises(RuntimeError, match="Database access not allowed"):
        User.objects.count()


@pytest.mark.django_db
def test_a_test_that_asks_for_the_database_is_marked(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("django_database") is not None
    assert User.objects.count() == 0


def test_a_test_reaching_the_database_through_a_fixture_is_marked(customer, request: pytest.FixtureRequest) -> None:
    # ``customer`` logs Ann in: it asks for ``db`` itself, the test does not
    assert request.node.get_closest_marker("django_database") is not None


def test_no_test_code_lifts_pytest_djangos_database_block() -> None:
    """``django_db_blocker.unblock()`` would let an unmarked test (or a fixture of one) write
    Django's tables behind the marker's back: it would then never run on PostgreSQL."""
    lifting = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
               if path != Path(__file__).resolve() and re.search(r"django_db_blocker|\.unblock\(", path.read_text())]
    assert lifting == []


@pytest.mark.django_db(databases=[])
def test_a_test_that_names_no_database_is_not_marked_and_cannot_reach_one(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("django_database") is None
    with pytest.raises(Exception, match="not allowed"):
        User.objects.count()
