"""Production settings: ``check --deploy`` is clean with DEBUG off, every environment
value is parsed strictly, the billing settings have system checks, and the WSGI app
loads under gunicorn."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured

from rpay_site import env

ROOT = Path(__file__).resolve().parent.parent
# Every knob this file turns: cleared from the inherited environment so a developer's
# shell cannot change what the subprocesses see.
KNOBS = [
    "DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DJANGO_SECURE_SSL_REDIRECT",
    "DJANGO_SECURE_HSTS_SECONDS", "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", "DJANGO_SECURE_HSTS_PRELOAD",
    "DJANGO_SESSION_COOKIE_SECURE", "DJANGO_CSRF_COOKIE_SECURE", "DJANGO_SECURE_PROXY_SSL_HEADER",
    "DJANGO_CSRF_TRUSTED_ORIGINS", "DJANGO_SETTINGS_MODULE", "DJANGO_TRUSTED_PROXY_COUNT",
    # set by the browser fixture (tests/browser.py) for the whole session; check --deploy refuses it
    "DJANGO_ALLOW_ASYNC_UNSAFE",
]


def production_env(**extra: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in KNOBS}
    environ.update(
        DJANGO_SETTINGS_MODULE="rpay_site.settings",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="billing.example.com",
    )
    environ.update(extra)
    return environ


def run(args: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def manage(*args: str, **extra: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "manage.py", *args], production_env(**extra))


def settings_of(*names: str, **extra: str) -> dict:
    """The named settings as a subprocess with this environment loads them."""
    code = ("import django, json; django.setup(); from django.conf import settings; "
            f"print(json.dumps({{n: getattr(settings, n) for n in {list(names)!r}}}))")
    done = run([sys.executable, "-c", code], production_env(**extra))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- check --deploy ----------------------------------------------------------------


def test_check_deploy_is_clean_with_debug_off() -> None:
    done = manage("check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout and "WARNING" not in done.stderr


def test_secure_defaults_when_debug_is_off() -> None:
    values = settings_of("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
                         "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER")
    assert values == {"SECURE_SSL_REDIRECT": True, "SECURE_HSTS_SECONDS": 31_536_000,
                      "SECURE_HSTS_INCLUDE_SUBDOMAINS": True, "SESSION_COOKIE_SECURE": True,
                      "CSRF_COOKIE_SECURE": True, "SECURE_PROXY_SSL_HEADER": None}


def test_https_knobs_come_from_the_environment() -> None:
    values = settings_of("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_PRELOAD",
                         "SECURE_PROXY_SSL_HEADER", "CSRF_TRUSTED_ORIGINS",
                         DJANGO_SECURE_SSL_REDIRECT="off", DJANGO_SECURE_HSTS_SECONDS="300",
                         DJANGO_SECURE_HSTS_PRELOAD="no", DJANGO_SECURE_PROXY_SSL_HEADER="x-forwarded-proto",
                         DJANGO_CSRF_TRUSTED_ORIGINS="https://a.example.com, https://b.example.com")
    assert values == {"SECURE_SSL_REDIRECT": False, "SECURE_HSTS_SECONDS": 300, "SECURE_HSTS_PRELOAD": False,
                      "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
                      "CSRF_TRUSTED_ORIGINS": ["https://a.example.com", "https://b.example.com"]}


def test_check_deploy_reports_a_knob_turned_off() -> None:
    """The clean result above is the settings' doing: turning HSTS off is reported."""
    done = manage("check", "--deploy", "--fail-level", "WARNING", DJANGO_SECURE_HSTS_SECONDS="0")
    assert done.returncode != 0 and "security.W004" in done.stderr


# --- strict environment parsing ------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), [
    ("DJANGO_DEBUG", "flase"),
    ("EMAIL_USE_TLS", "2"),
    ("EMAIL_PORT", "25x"),
    ("LOGIN_FAILURE_LIMIT", "0"),
    ("PAYMENT_RETRY_DAYS", "1,three"),
    ("DJANGO_SECURE_HSTS_SECONDS", "-1"),
    ("DJANGO_SECURE_PROXY_SSL_HEADER", "X-Anything"),
    ("BILLING_LOG_LEVEL", "LOUD"),
])
def test_a_bad_value_stops_django_naming_the_variable(name: str, value: str) -> None:
    done = manage("check", **{name: value})
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured:") and name in last, done.stderr


def test_a_bad_database_url_names_the_variable() -> None:
    done = manage("check", DATABASE_URL="nosuchdb://x")
    assert "ImproperlyConfigured: Environment variable DATABASE_URL" in done.stderr


def test_debug_off_without_a_secret_key_is_refused() -> None:
    done = manage("check", DJANGO_SECRET_KEY="")
    assert "ImproperlyConfigured: DJANGO_SECRET_KEY must be set" in done.stderr


@pytest.mark.parametrize(("value", "expected"), [
    ("1", True), ("TRUE", True), (" yes ", True), ("on", True),
    ("0", False), ("False", False), ("no", False), ("off", False), ("", None),
])
def test_env_bool_words(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool | None) -> None:
    monkeypatch.setenv("RPAY_TEST_FLAG", value)
    assert env.env_bool("RPAY_TEST_FLAG", None) is expected  # type: ignore[arg-type]


def test_env_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RPAY_TEST_X", raising=False)
    assert env.env_int("RPAY_TEST_X", 7) == 7 and env.env_int_list("RPAY_TEST_X", [1]) == [1]
    monkeypatch.setenv("RPAY_TEST_X", " 1, 3 ,5 ")
    assert env.env_int_list("RPAY_TEST_X", []) == [1, 3, 5]
    assert env.env_list("RPAY_TEST_X", []) == ["1", "3", "5"]
    monkeypatch.setenv("RPAY_TEST_X", "1,,3")
    with pytest.raises(ImproperlyConfigured, match="RPAY_TEST_X"):
        env.env_int_list("RPAY_TEST_X", [])
    monkeypatch.setenv("RPAY_TEST_X", "4")
    with pytest.raises(ImproperlyConfigured, match=r"RPAY_TEST_X='4'.*at least 5"):
        env.env_int("RPAY_TEST_X", 7, minimum=5)
    monkeypatch.setenv("RPAY_TEST_X", "info")
    assert env.env_choice("RPAY_TEST_X", "WARNING", ["INFO", "WARNING"]) == "INFO"


# --- the billing settings' system checks ----------------------------------------------


def billing_check_ids() -> list[str]:
    return sorted(message.id for message in run_checks(tags=["billing"]))


def test_default_billing_settings_pass_the_checks() -> None:
    assert billing_check_ids() == []


@pytest.mark.parametrize(("setting", "value", "check_id"), [
    ("RECEIPT_RETENTION_DAYS", 183, "billing.E001"),
    ("BILLING_TIMEZONE", "Mars/Olympus_Mons", "billing.E002"),
    ("BILLING_TIMEZONE", "", "billing.E002"),
    ("PAYMENT_RETRY_DAYS", [1, 0, 5], "billing.E003"),
    ("PAYMENT_RETRY_DAYS", [-2], "billing.E003"),
    ("PAYMENT_GATEWAY", "core.payments.gateway.NoSuchGateway", "billing.E004"),
    ("PAYMENT_GATEWAY", "nosuchmodule.Gateway", "billing.E004"),
    ("PAYMENT_GATEWAY", "core.payments.gateway.luhn_valid", "billing.E004"),  # importable, not a gateway
    ("SITE_URL", "billing.example.com", "billing.E005"),
    ("SITE_URL", "ftp://billing.example.com", "billing.E005"),
    ("SITE_URL", "https://", "billing.E005"),
])
def test_billing_check_refuses(settings, setting: str, value: object, check_id: str) -> None:
    setattr(settings, setting, value)
    assert billing_check_ids() == [check_id]


@pytest.mark.parametrize(("setting", "value"), [
    ("RECEIPT_RETENTION_DAYS", 184),  # exactly six months at their longest
    ("BILLING_TIMEZONE", "Pacific/Kiritimati"),
    ("PAYMENT_RETRY_DAYS", []),  # no retries: cancelled at the first decline
    ("SITE_URL", "https://billing.example.com/"),
])
def test_billing_check_accepts_edge_values(settings, setting: str, value: object) -> None:
    setattr(settings, setting, value)
    assert billing_check_ids() == []


def test_manage_check_runs_the_billing_checks() -> None:
    done = manage("check", RECEIPT_RETENTION_DAYS="30")
    assert done.returncode != 0 and "billing.E001" in done.stderr


# --- gunicorn ----------------------------------------------------------------------------


def test_gunicorn_loads_the_wsgi_app() -> None:
    done = run([sys.executable, "-m", "gunicorn", "--check-config", "rpay_site.wsgi:application"],
               production_env())
    assert done.returncode == 0, done.stdout + done.stderr


def test_gunicorn_check_config_fails_when_the_app_cannot_load() -> None:
    """The check above really loads the app: a settings error makes it fail."""
    done = run([sys.executable, "-m", "gunicorn", "--check-config", "rpay_site.wsgi:application"],
               production_env(DJANGO_DEBUG="maybe"))
    assert done.returncode != 0 and "DJANGO_DEBUG" in done.stdout + done.stderr
