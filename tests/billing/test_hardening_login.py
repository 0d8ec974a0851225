"""Log-in throttling (django-axes) on /login/ and /admin/login/: per account AND
address, with a cool-off; and the e-mail log-in is case-insensitive."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-Password-2026"
ATTACKER = "203.0.113.7"
ELSEWHERE = "198.51.100.20"


@pytest.fixture(autouse=True)
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(moto_table) -> dict[str, object]:
    make = get_user_model().objects.create_user
    staff = make("staff@example.com", email="staff@example.com", password=PASSWORD)
    staff.is_staff = True
    staff.save()
    return {
        "pat": make("pat@example.com", email="pat@example.com", password=PASSWORD),
        "sam": make("sam@example.com", email="sam@example.com", password=PASSWORD),
        "staff": staff,
    }


def attempt(username: str, password: str, address: str, path: str = "/login/"):
    """One log-in from a fresh browser at ``address``; the response."""
    return Client().post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


def fail_until_locked(username: str, address: str, path: str = "/login/") -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = attempt(username, "wrong-password", address, path)
        assert response.status_code in (200, 429)


def test_after_repeated_failures_the_right_password_no_longer_gets_in(users) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt("pat@example.com", "wrong", ATTACKER).status_code == 200
    assert logged_in(attempt("pat@example.com", PASSWORD, ATTACKER))  # one short of the limit: still in
    fail_until_locked("pat@example.com", ATTACKER)  # a success reset the count; now the limit is reached

    locked = attempt("pat@example.com", PASSWORD, ATTACKER)
    assert locked.status_code == 429 and not logged_in(locked)
    html = locked.content.decode()
    assert "Too many failed log-ins" in html
    assert f"paused for {settings.AXES_COOLOFF_TIME.seconds // 60} minutes" in html
    assert 'href="/password/reset/"' in html and "navbar" in html  # the portal's own look


def test_the_lock_out_is_per_address(users) -> None:
    fail_until_locked("pat@example.com", ATTACKER)
    assert attempt("pat@example.com", PASSWORD, ATTACKER).status_code == 429
    # the customer at home is not locked out by someone guessing elsewhere
    assert logged_in(attempt("pat@example.com", PASSWORD, ELSEWHERE))


def test_the_lock_out_is_per_account(users) -> None:
    fail_until_locked("pat@example.com", ATTACKER)
    assert attempt("pat@example.com", PASSWORD, ATTACKER).status_code == 429
    # another customer behind the same address (an office, a carrier NAT) still gets in
    assert logged_in(attempt("sam@example.com", PASSWORD, ATTACKER))


def test_changing_the_case_of_the_email_does_not_escape_the_lock_out(users) -> None:
    for username in ["pat@example.com", "PAT@example.com", "Pat@Example.com", " pat@EXAMPLE.com",
                     "pat@example.COM"][: settings.AXES_FAILURE_LIMIT]:
        attempt(username, "wrong", ATTACKER)
    assert attempt("Pat@example.com", PASSWORD, ATTACKER).status_code == 429
    assert attempt("pat@example.com", PASSWORD, ATTACKER).status_code == 429


def test_the_cool_off_expires(users) -> None:
    fail_until_locked("pat@example.com", ATTACKER)
    with time_machine.travel(timezone.now() + settings.AXES_COOLOFF_TIME - timedelta(seconds=30), tick=False):
        assert attempt("pat@example.com", PASSWORD, ATTACKER).status_code == 429
    with time_machine.travel(timezone.now() + settings.AXES_COOLOFF_TIME + timedelta(seconds=30), tick=False):
        assert logged_in(attempt("pat@example.com", PASSWORD, ATTACKER))


def test_the_admin_log_in_is_throttled_too(users) -> None:
    fail_until_locked("staff@example.com", ATTACKER, "/admin/login/")
    locked = attempt("staff@example.com", PASSWORD, ATTACKER, "/admin/login/")
    assert locked.status_code == 429 and not logged_in(locked)
    html = locked.content.decode()
    assert "Too many failed log-ins" in html and 'id="header"' in html  # the admin's look
    assert logged_in(attempt("staff@example.com", PASSWORD, ELSEWHERE, "/admin/login/"))
    # the two log-in pages share one count: the portal page is no way around it
    assert attempt("staff@example.com", PASSWORD, ATTACKER, "/login/").status_code == 429


def test_the_limit_and_cool_off_come_from_settings(users, settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    attempt("pat@example.com", "wrong", ATTACKER)
    assert logged_in(attempt("pat@example.com", PASSWORD, ATTACKER))
    attempt("pat@example.com", "wrong", ATTACKER)
    attempt("pat@example.com", "wrong", ATTACKER)
    assert attempt("pat@example.com", PASSWORD, ATTACKER).status_code == 429


# --- case-insensitive e-mail log-in ---------------------------------------------------------


@pytest.mark.parametrize("typed", ["PAT@example.com", "Pat@Example.Com", " pat@example.com "])
def test_log_in_ignores_the_case_of_the_email(users, typed: str) -> None:
    assert logged_in(attempt(typed, PASSWORD, ELSEWHERE))


def test_admin_log_in_ignores_the_case_of_the_email(users) -> None:
    assert logged_in(attempt("STAFF@example.com", PASSWORD, ELSEWHERE, "/admin/login/"))


def test_usernames_differing_only_in_case_need_the_exact_spelling(users) -> None:
    """Sign-up never makes such a pair, but createsuperuser could: neither is guessed."""
    get_user_model().objects.create_user("Pat@example.com", password="another-Password-2026")
    assert logged_in(attempt("pat@example.com", PASSWORD, ELSEWHERE))
    assert logged_in(attempt("Pat@example.com", "another-Password-2026", ELSEWHERE))
    assert not logged_in(attempt("PAT@example.com", PASSWORD, ELSEWHERE))


def test_test_client_login_still_works(users) -> None:
    """authenticate() without a request (the test client, a shell) skips the throttle."""
    assert Client().login(username="pat@example.com", password=PASSWORD)


# --- the client's address behind proxies ---------------------------------------------------


def through_proxy(username: str, password: str, forwarded_for: str):
    return Client().post("/login/", {"username": username, "password": password},
                         REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR=forwarded_for)


def test_behind_a_trusted_proxy_the_lock_out_is_per_client_address(users, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    for _ in range(settings.AXES_FAILURE_LIMIT):
        # the attacker also forges an entry on the left: only the proxy's own entry counts
        through_proxy("pat@example.com", "wrong", f"1.2.3.{_}, {ATTACKER}")
    assert through_proxy("pat@example.com", PASSWORD, ATTACKER).status_code == 429
    assert logged_in(through_proxy("pat@example.com", PASSWORD, ELSEWHERE))


def test_without_trusted_proxies_forwarded_for_is_ignored(users, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 0
    for n in range(settings.AXES_FAILURE_LIMIT):
        through_proxy("pat@example.com", "wrong", f"192.0.2.{n}")  # a forged header per try
    assert through_proxy("pat@example.com", PASSWORD, ELSEWHERE).status_code == 429  # REMOTE_ADDR counted


@pytest.mark.parametrize("language, words, never", [
    ("en", "Please enter a correct e-mail and password", "correct username"),
    ("it", "Inserisci un indirizzo e-mail e una password corretti", "nome utente")])
def test_a_wrong_password_names_the_e_mail_the_form_asks_for(users, language, words, never) -> None:
    client = Client()
    response = client.post("/login/", {"username": "nobody@example.com", "password": "wrong"},
                           HTTP_ACCEPT_LANGUAGE=language)
    html = response.content.decode()
    assert words in html and never not in html
