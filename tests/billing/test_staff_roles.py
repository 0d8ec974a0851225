"""Staff roles: support, finance, catalog and admin groups, each staff URL checking
its own permission. The matrix below is the specification: every staff URL x every role
(no role, support, finance, catalog, superuser), allowed -> 200/302, refused -> 403 with
a page inside the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from billing import access
from tests.builders import make_customer_with_history, make_user

pytestmark = pytest.mark.django_db

ROLES = ["none", "support", "finance", "catalog", "admin", "superuser"]

# URL name -> the roles that may open it (the superuser may open everything).
MATRIX: dict[str, set[str]] = {
    "staff_index": {"support", "finance", "admin"},
    "staff_user_billing": {"support", "finance", "admin"},
    "staff_account": {"support", "finance", "admin"},
    "staff_upcoming": {"support", "finance", "admin"},
    "staff_runs": {"support", "finance", "admin"},
    "staff_webhook_events": {"support", "finance", "admin"},
    "staff_disputes": {"support", "finance", "admin"},
    "staff_cancel": {"support"},
    # data rights: the customer's data file, closing on their request (the support role)
    "staff_export_data": {"support"},
    "staff_close_account": {"support"},
    "staff_payment_day": {"support"},
    "staff_pause": {"support"},  # a pause moves the schedule, as a change of day does
    "staff_resume": {"support"},
    "staff_retry": {"finance"},
    "staff_switch": {"finance"},  # an upgrade charges the card: money
    "staff_seats": {"finance"},  # more seats charge the card, fewer refund to it: money
    "staff_add_ons": {"finance"},  # what the card is charged from the next payment: money
    "staff_remove_add_on": {"finance"},
    "staff_add_metered": {"finance"},  # a meter's usage billed from the next payment on: money
    "staff_remove_metered": {"finance"},  # and no longer billed after the period paid for
    "staff_change_metered": {"finance"},  # or billed at another price from the next period
    "staff_refund": {"finance"},
    "staff_products": {"catalog"},
    "staff_product_add": {"catalog"},
    "staff_product_edit": {"catalog"},
    "staff_product_retire": {"catalog"},
    # prices: seen beside the products by the catalog role, added and archived by finance and admin
    "staff_prices": {"catalog", "finance", "admin"},
    "staff_price_add": {"finance", "admin"},
    "staff_price_archive": {"finance", "admin"},
    # coupons: listed by whoever sees billing and by the catalog role, which
    # makes and changes them; given to a subscription by finance
    "staff_coupons": {"support", "finance", "catalog", "admin"},
    "staff_coupon_add": {"catalog"},
    "staff_coupon_edit": {"catalog"},
    "staff_coupon_end": {"catalog"},
    "staff_coupon": {"finance"},
    # the REST API's keys: the admin role alone
    "staff_api_keys": {"admin"},
    "staff_api_key_revoke": {"admin"},
    # the seller's business and tax profile: read by whoever sees billing, saved by finance
    "staff_business_tax": {"support", "finance", "admin"},
    "staff_tax_report": {"finance"},  # the quarter's VAT: money
    "staff_revenue": {"finance", "admin"},  # MRR, churn and cohorts: the business's figures, not support's
    # meters: what customers are charged for by usage, as prices are
    "staff_meters": {"finance", "admin"},
    "staff_meter_add": {"finance", "admin"},
    "staff_customer_usage": {"support", "finance", "admin"},  # a customer's usage: as their account page
    # the merchant's webhook endpoints: seen by whoever sees billing, changed by the admin role
    "staff_webhook_endpoints": {"support", "finance", "admin"},
    "staff_webhook_endpoint": {"support", "finance", "admin"},
    "staff_webhook_endpoint_add": {"admin"},
    "staff_webhook_endpoint_rotate": {"admin"},
    "staff_webhook_endpoint_status": {"admin"},
    "staff_webhook_endpoint_test": {"admin"},
    "staff_webhook_delivery_resend": {"admin"},
}


@pytest.fixture
def customer(moto_table):
    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    access.create_coupon("SPRING", percent_off=10, actor="test")
    made = make_customer_with_history()
    made.endpoint = access.create_webhook_endpoint("https://hooks.example.com/in", None, "whsec_dGVzdA==", actor="t")
    made.delivery = access.queue_extra_delivery(made.endpoint.EndpointId, kind="test", event_id="evt_test_1",
                                                event_type="webhook.test", payload="{}")
    return made


def url_of(name: str, c) -> str:
    a = c.account_id
    args = {
        "staff_user_billing": [c.user.pk],
        "staff_account": [a],
        "staff_customer_usage": [a],
        "staff_export_data": [a],
        "staff_close_account": [a],
        "staff_cancel": [a, c.sub.sub_id],
        "staff_payment_day": [a, c.sub.sub_id],
        "staff_pause": [a, c.sub.sub_id],
        "staff_resume": [a, c.sub.sub_id],
        "staff_retry": [a, c.past_due.sub_id],
        "staff_refund": [a, c.receipt.SK],
        "staff_product_edit": ["NEWS-DAILY"],
        "staff_product_retire": ["NEWS-DAILY"],
        "staff_price_add": ["NEWS-DAILY"],
        "staff_price_archive": ["price_default_NEWS-DAILY"],
        "staff_coupon_edit": ["SPRING"],
        "staff_coupon_end": ["SPRING"],
        "staff_coupon": [a, c.sub.sub_id],
        "staff_switch": [a, c.sub.sub_id],
        "staff_seats": [a, c.sub.sub_id],
        "staff_add_ons": [a, c.sub.sub_id],
        "staff_remove_add_on": [a, c.sub.sub_id],
        "staff_add_metered": [a, c.sub.sub_id],
        "staff_remove_metered": [a, c.sub.sub_id],
        "staff_change_metered": [a, c.sub.sub_id],
        "staff_api_key_revoke": ["0123456789ab"],
        "staff_webhook_endpoint": [c.endpoint.EndpointId],
        "staff_webhook_endpoint_rotate": [c.endpoint.EndpointId],
        "staff_webhook_endpoint_status": [c.endpoint.EndpointId],
        "staff_webhook_endpoint_test": [c.endpoint.EndpointId],
        "staff_webhook_delivery_resend": [c.endpoint.EndpointId, c.delivery.SK],
    }.get(name, [])
    return reverse(f"admin:{name}", args=args)


def login_as(client: Client, role: str) -> None:
    if role == "superuser":
        user = get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw")
    else:
        user = make_user(f"{role}@rpay.localhost", staff=True, roles=[] if role == "none" else [role])
    client.force_login(user)


def test_the_matrix_covers_every_staff_url() -> None:
    from django.contrib import admin

    names = {p.name for p in admin.site.get_urls() if getattr(p, "name", "") and p.name.startswith("staff_")}
    assert names == set(MATRIX)


@pytest.mark.parametrize("role", ROLES)
def test_every_staff_url_for_each_role(client: Client, customer, role: str) -> None:
    login_as(client, role)
    for name, allowed in MATRIX.items():
        url = url_of(name, customer)
        response = client.get(url)
        if role == "superuser" or role in allowed:
            assert response.status_code in (200, 302), (role, name)
            if response.status_code == 302:
                assert not response["Location"].startswith("/admin/login/"), (role, name)
        else:
            assert response.status_code == 403, (role, name)
            html = response.content.decode()
            # a clear page inside the admin's own layout, naming what is missing
            assert 'data-testid="forbidden"' in html and 'id="site-name"' in html, (role, name)
            assert "billing." in html, (role, name)


@pytest.mark.parametrize("role", ["none", "finance", "catalog"])
def test_a_refused_action_changes_nothing(client: Client, customer, role: str) -> None:
    login_as(client, role)
    sub = customer.sub
    assert client.post(url_of("staff_cancel", customer)).status_code == 403
    assert client.post(url_of("staff_payment_day", customer), {"payment_day": 2}).status_code == 403
    after = access.get_subscription(customer.account_id, sub.sub_id)
    assert (after.Status, after.PaymentDay) == (sub.Status, sub.PaymentDay)
    # none but the test data's own events (M6: the access functions record them)
    assert [e for e in access.get_events_by_account(customer.account_id) if e.Actor.endswith("@rpay.localhost")] == []


def test_support_cannot_refund_or_edit_the_catalog(client: Client, customer) -> None:
    login_as(client, "support")
    response = client.post(url_of("staff_refund", customer), {"amount": "9.99", "request_id": "0" * 16})
    assert response.status_code == 403
    assert not access.get_receipt(customer.account_id, customer.receipt.SK).RefundedAmount
    assert client.post(url_of("staff_product_retire", customer)).status_code == 403
    assert access.get_product("NEWS-DAILY").Status == "active"


@pytest.mark.parametrize("role, shown, hidden", [
    ("support", ["Cancel", "Change day"], ["Retry now", ">Refund<", "Give coupon"]),
    ("finance", ["Retry now", ">Refund<", "Give coupon"], ["Cancel<", "Change day"]),
])
def test_the_account_page_offers_only_what_the_role_may_do(client: Client, customer, role, shown, hidden) -> None:
    login_as(client, role)
    page = client.get(url_of("staff_account", customer)).content.decode()
    for text in shown:
        assert text in page, (role, text)
    for text in hidden:
        assert text not in page, (role, text)


@pytest.mark.parametrize("role, links, no_links", [
    ("support", ["staff_index", "staff_upcoming", "staff_runs"], ["staff_products"]),
    ("finance", ["staff_index", "staff_upcoming", "staff_runs"], ["staff_products"]),
    ("catalog", ["staff_products", "staff_product_add"], ["staff_index", "staff_upcoming", "staff_runs"]),
])
def test_the_admin_index_shows_a_billing_role_its_pages(client: Client, moto_table, role, links, no_links) -> None:
    login_as(client, role)
    response = client.get(reverse("admin:index"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "have permission to view or edit anything" not in html
    assert "Billing" in html
    for name in links:
        assert f'href="{reverse(f"admin:{name}")}"' in html, (role, name)
    for name in no_links:
        assert f'href="{reverse(f"admin:{name}")}"' not in html, (role, name)


def test_a_staff_user_without_a_role_is_told_so_on_the_index(client: Client, moto_table) -> None:
    login_as(client, "none")
    html = client.get(reverse("admin:index")).content.decode()
    assert "have permission to view or edit anything" in html
    assert reverse("admin:staff_index") not in html


def test_the_roles_exist_with_their_permissions() -> None:
    def perms(role: str) -> set[str]:
        return set(Group.objects.get(name=role).permissions.values_list("codename", flat=True))

    assert perms("support") == {"view_billing", "cancel_subscription", "change_payment_day"}
    assert perms("finance") == {"view_billing", "manage_money"}
    assert perms("catalog") == {"manage_catalog"}
    assert perms("admin") == {"view_billing", "manage_integrations"}


def test_the_roles_migration_is_idempotent() -> None:
    import importlib
    from types import SimpleNamespace

    from django.apps import apps
    from django.contrib.auth.models import Permission
    from django.db import connection

    roles = importlib.import_module("billing.migrations.0003_staff_roles")

    def state() -> tuple:
        return (Group.objects.count(), Permission.objects.count(),
                sorted(Group.objects.values_list("name", "permissions__codename")))

    before = state()
    editor = SimpleNamespace(connection=connection)  # all the migration function uses
    roles.create_roles(apps, editor)
    roles.create_roles(apps, editor)
    assert state() == before


def test_a_direct_grant_of_the_finance_permission_still_works(client: Client, customer) -> None:
    # billing.manage_money predates the roles and keeps its name: existing grants keep working.
    from django.contrib.auth.models import Permission

    user = make_user("old-grant@rpay.localhost", staff=True, roles=[])
    user.user_permissions.add(Permission.objects.get(codename="manage_money", content_type__app_label="billing"))
    client.force_login(user)
    assert client.get(url_of("staff_refund", customer)).status_code == 200
    assert client.get(url_of("staff_cancel", customer)).status_code == 403
