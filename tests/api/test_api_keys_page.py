"""The staff page of the API's keys: the admin role only; a key shown once, listed with
its last use, revoked at once."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from billing import access
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(moto_table) -> Client:
    user = get_user_model().objects.create_superuser("admin@rpay.localhost", "admin@rpay.localhost", "pw-for-tests")
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_makes_a_key_sees_it_once_and_revokes_it(admin_client: Client) -> None:
    url = reverse("admin:staff_api_keys")
    made = admin_client.post(url, {"name": "warehouse", "scope": "write"})
    assert made.status_code == 200
    [secret] = re.findall(r'data-testid="new-key-secret">([^<]+)<', made.content.decode())
    listed = admin_client.get(url).content.decode()
    assert "warehouse" in listed and secret not in listed
    assert Client().get("/api/v1/products", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    [key] = access.list_api_keys()
    assert key.CreatedBy == "admin@rpay.localhost" and key.LastUsedAt
    revoked = admin_client.post(reverse("admin:staff_api_key_revoke", args=[key.KeyId]))
    assert revoked.status_code == 302
    assert Client().get("/api/v1/products", headers={"Authorization": f"Bearer {secret}"}).status_code == 401


def test_staff_without_the_admin_role_are_refused(moto_table) -> None:
    client = Client()
    client.force_login(make_user("clerk@rpay.localhost", staff=True, money=True))
    assert client.get(reverse("admin:staff_api_keys")).status_code == 403
    assert client.post(reverse("admin:staff_api_keys"), {"name": "x", "scope": "write"}).status_code == 403
    assert access.list_api_keys() == []
