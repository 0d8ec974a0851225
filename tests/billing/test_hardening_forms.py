"""The sign-up's password form (on the confirmation link's page) builds on Django's SetPasswordMixin; every ValidationError carries a
code; an over-long e-mail is a form error, never a 500."""

from __future__ import annotations

import ast
from datetime import date
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import SetPasswordMixin
from django.test import Client

from billing.forms import ConfirmSignUpForm, SignUpForm
from core.cardforms import CardFields
from tests.signup import sign_up

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-Password-2026"
# Where the portal raises or adds form errors.
FORM_ERROR_SOURCES = ["billing/forms.py", "core/cardforms.py", "billing/views/auth_pages.py"]


@pytest.fixture(autouse=True)
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def codes(form) -> dict[str, list[str | None]]:
    return {field: [e.code for e in errors] for field, errors in form.errors.as_data().items()}


def test_the_sign_up_password_form_uses_djangos_set_password_mixin() -> None:
    assert issubclass(ConfirmSignUpForm, SetPasswordMixin)


@pytest.mark.parametrize(("email", "data", "expected"), [
    ("x@example.com", {"password1": PASSWORD, "password2": PASSWORD + "x"}, {"password2": ["password_mismatch"]}),
    ("x@example.com", {"password1": "short", "password2": "short"}, {"password1": ["password_too_short"]}),
    ("x@example.com", {"password1": "12345678901", "password2": "12345678901"},
     {"password1": ["password_too_common", "password_entirely_numeric"]}),
    ("xavier.example@example.com", {"password1": "xavier.example", "password2": "xavier.example"},
     {"password1": ["password_too_similar"]}),
    ("x@example.com", {"password1": "", "password2": ""}, {"password1": ["required"], "password2": ["required"]}),
])
def test_sign_up_password_errors_have_codes(moto_table, email: str, data: dict, expected: dict) -> None:
    form = ConfirmSignUpForm(data, email=email)
    assert not form.is_valid()
    assert codes(form) == expected


@pytest.mark.parametrize(("data", "expected"), [
    ({"email": "not-an-email"}, {"email": ["invalid"]}),
    ({"email": ""}, {"email": ["required"]}),
])
def test_sign_up_errors_have_codes(moto_table, data: dict, expected: dict) -> None:
    form = SignUpForm(data)
    assert not form.is_valid()
    assert codes(form) == expected


def test_an_email_with_an_account_is_no_form_error(moto_table) -> None:
    # It would tell anyone which addresses have accounts: the page mails the owner instead
    # (test_portal_accounts).
    get_user_model().objects.create_user("ann@example.com", email="ann@example.com", password=PASSWORD)
    form = SignUpForm({"email": "Ann@Example.com"})
    assert form.is_valid() and form.cleaned_data["email"] == "ann@example.com"


@pytest.mark.parametrize(("changes", "expected"), [
    ({"card_number": "4242 4242 4242 4241"}, {"card_number": ["invalid_card_number"]}),
    ({"cvc": "12a"}, {"cvc": ["invalid_cvc"]}),
    ({"exp_year": "2026", "exp_month": "1"}, {"exp_month": ["card_expired"]}),
])
def test_card_form_errors_have_codes(changes: dict, expected: dict) -> None:
    data = {"card_number": "4242 4242 4242 4242", "exp_month": "12", "exp_year": "2030", "cvc": "123", **changes}
    form = CardFields(data, today=date(2026, 6, 15))
    assert codes(form) == expected


def test_every_validation_error_in_the_portal_source_has_a_code() -> None:
    """No ValidationError(...) without code=, and no add_error(field, "a bare string")."""
    missing = []
    for name in FORM_ERROR_SOURCES:
        tree = ast.parse((ROOT / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee == "ValidationError" and not any(k.arg == "code" for k in node.keywords):
                missing.append(f"{name}:{node.lineno}")
            if callee == "add_error" and len(node.args) == 2 and not (
                    isinstance(node.args[1], ast.Call | ast.Name)):
                missing.append(f"{name}:{node.lineno} add_error with a bare message")
    assert missing == []


# --- long e-mail --------------------------------------------------------------------------


def _dotted(length: int) -> str:
    """A syntactically valid e-mail of exactly ``length`` characters (long domain labels)."""
    local = "pat"
    tld = ".com"
    room = length - len(local) - 1 - len(tld)
    labels, left = [], room
    while left > 0:
        size = min(60, left)
        if left - size == 1:  # never leave a lone dot
            size -= 1
        labels.append("d" * size)
        left -= size + 1
    host = ".".join(labels)
    email = f"{local}@{host}{tld}"
    assert len(email) == length, len(email)
    return email


@pytest.mark.parametrize("length", [151, 215])
def test_an_email_longer_than_the_username_column_is_a_form_error(moto_table, length: int) -> None:
    email = _dotted(length)
    response = Client().post("/signup/", {"email": email, "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200
    form = response.context["form"]
    assert codes(form) == {"email": ["max_length"]}
    assert "longer than the 150 characters rpay can keep" in response.content.decode()
    assert not get_user_model().objects.filter(email=email).exists()


def test_an_email_of_exactly_150_characters_signs_up(moto_table, mailoutbox) -> None:
    email = _dotted(150)
    response = sign_up(Client(), email, PASSWORD)
    assert response.status_code == 302
    user = get_user_model().objects.get(username=email)
    assert len(user.username) == 150
    # and logs in again, typed in capitals
    again = Client().post("/login/", {"username": email.upper(), "password": PASSWORD})
    assert again.status_code == 302 and "_auth_user_id" in again.wsgi_request.session


def test_the_email_input_carries_the_limit(moto_table) -> None:
    html = Client().get("/signup/").content.decode()
    assert 'maxlength="150"' in html


def test_sign_up_logs_in_and_a_later_log_in_ignores_case(moto_table, mailoutbox) -> None:
    client = Client()
    response = sign_up(client, "Zoe@Example.com", PASSWORD)
    assert response.status_code == 302
    assert client.get("/subscribe/").status_code == 200  # the session is a logged-in one
    assert get_user_model().objects.get(email="zoe@example.com").username == "zoe@example.com"
    again = Client().post("/login/", {"username": "ZOE@example.COM", "password": PASSWORD})
    assert again.status_code == 302 and "_auth_user_id" in again.wsgi_request.session
