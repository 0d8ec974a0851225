"""Who reaches which staff page: anonymous and customers go to the admin log-in, staff
see everything but money actions, and the money actions need billing.manage_money."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.builders import make_customer_with_history, make_user

pytestmark = pytest.mark.django_db


def staff_urls(c) -> dict[str, bool]:
    """Every staff URL (GET), and whether it needs the money permission."""
    a = c.account_id
    return {
        reverse("admin:staff_index"): False,
        reverse("admin:staff_index") + f"?account_id={a}": False,
        reverse("admin:staff_user_billing", args=[c.user.pk]): False,
        reverse("admin:staff_account", args=[a]): False,
        reverse("admin:staff_cancel", args=[a, c.sub.sub_id]): False,
        reverse("admin:staff_payment_day", args=[a, c.sub.sub_id]): False,
        reverse("admin:staff_upcoming"): False,
        reverse("admin:staff_runs"): False,
        reverse("admin:staff_products"): False,
        reverse("admin:staff_product_add"): False,
        reverse("admin:staff_product_edit", args=["NEWS-DAILY"]): False,
        reverse("admin:staff_product_retire", args=["NEWS-DAILY"]): False,
        reverse("admin:staff_retry", args=[a, c.past_due.sub_id]): True,
        reverse("admin:staff_refund", args=[a, c.receipt.SK]): True,
        reverse("admin:staff_add_metered", args=[a, c.sub.sub_id]): True,
        reverse("admin:staff_remove_metered", args=[a, c.sub.sub_id]): True,
        reverse("admin:staff_change_metered", args=[a, c.sub.sub_id]): True,
    }


@pytest.fixture
def setup(moto_table):
    from billing import access

    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    return make_customer_with_history()


def test_anonymous_is_sent_to_the_admin_login(client: Client, setup) -> None:
    for url in staff_urls(setup):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url


def test_a_customer_is_sent_to_the_admin_login(client: Client, setup) -> None:
    client.force_login(setup.user)
    for url in staff_urls(setup):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url
    # and cannot act either
    response = client.post(reverse("admin:staff_cancel", args=[setup.account_id, setup.sub.sub_id]))
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_staff_without_money_permission(client: Client, setup) -> None:
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    for url, money in staff_urls(setup).items():
        response = client.get(url, follow=False)
        if money:
            assert response.status_code == 403, url
        else:
            assert response.status_code in (200, 302), url
            if response.status_code == 302:  # the look-up jumps to the account page
                assert "/admin/staff/accounts/" in response["Location"], url
    response = client.post(reverse("admin:staff_refund", args=[setup.account_id, setup.receipt.SK]),
                           {"amount": "9.99"})
    assert response.status_code == 403
    # the account page does not offer what the clerk may not do
    page = client.get(reverse("admin:staff_account", args=[setup.account_id])).content.decode()
    assert "Retry now" not in page and ">Refund<" not in page


def test_staff_with_money_permission_reaches_everything(client: Client, setup) -> None:
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    for url in staff_urls(setup):
        response = client.get(url)
        assert response.status_code in (200, 302), url
        if response.status_code == 302:
            assert "/admin/staff/accounts/" in response["Location"], url
    page = client.get(reverse("admin:staff_account", args=[setup.account_id])).content.decode()
    assert "Retry now" in page and ">Refund<" in page


def test_superuser_has_the_money_permission(client: Client, setup) -> None:
    from django.contrib.auth import get_user_model

    boss = get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw")
    client.force_login(boss)
    assert client.get(reverse("admin:staff_refund", args=[setup.account_id, setup.receipt.SK])).status_code == 200


def test_actions_need_csrf(setup) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    response = client.post(reverse("admin:staff_cancel", args=[setup.account_id, setup.sub.sub_id]))
    assert response.status_code == 403


def test_the_permission_exists_and_the_seeded_staff_user_has_it(moto_table) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from billing.management.commands.seed_demo import CUSTOMER_EMAIL, STAFF_EMAIL

    call_command("seed_demo", stdout=None)
    users = get_user_model().objects
    assert users.get(username=STAFF_EMAIL).has_perm("billing.manage_money")
    assert users.get(username=STAFF_EMAIL).user_permissions.filter(codename="manage_money").exists()
    assert not users.get(username=CUSTOMER_EMAIL).has_perm("billing.manage_money")


def test_no_migration_is_missing() -> None:
    import io

    from django.core.management import call_command

    call_command("makemigrations", "billing", "--check", "--dry-run", stdout=io.StringIO())
