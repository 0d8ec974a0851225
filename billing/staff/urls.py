"""The wiring: every staff page as an admin URL, behind ``site.admin_view``."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.admin import AdminSite
from django.http import HttpResponse
from django.urls import URLPattern, path

from .account_page import account_detail
from .batch_pages import batch_runs, upcoming
from .catalog import product_add, product_edit, product_retire, products
from .lookup import index, user_billing
from .refunds import staff_refund
from .subscription_actions import staff_cancel, staff_payment_day, staff_retry


def staff_urls(site: AdminSite) -> list[URLPattern]:
    """The staff pages as admin URLs: ``admin_view`` sends anyone but active staff to the
    admin log-in and adds the admin's CSRF and cache protections."""

    def staff(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        return site.admin_view(view)

    sub = "staff/accounts/<str:account_id>/subscriptions/<str:sub_id>"
    return [
        path("staff/", staff(index), name="staff_index"),
        path("staff/users/<int:user_id>/", staff(user_billing), name="staff_user_billing"),
        path("staff/accounts/<str:account_id>/", staff(account_detail), name="staff_account"),
        path(f"{sub}/cancel/", staff(staff_cancel), name="staff_cancel"),
        path(f"{sub}/payment-day/", staff(staff_payment_day), name="staff_payment_day"),
        path(f"{sub}/retry/", staff(staff_retry), name="staff_retry"),
        path("staff/accounts/<str:account_id>/receipts/<str:receipt_sk>/refund/", staff(staff_refund),
             name="staff_refund"),
        path("staff/upcoming/", staff(upcoming), name="staff_upcoming"),
        path("staff/runs/", staff(batch_runs), name="staff_runs"),
        path("staff/products/", staff(products), name="staff_products"),
        path("staff/products/add/", staff(product_add), name="staff_product_add"),
        path("staff/products/<str:sku>/edit/", staff(product_edit), name="staff_product_edit"),
        path("staff/products/<str:sku>/retire/", staff(product_retire), name="staff_product_retire"),
    ]
