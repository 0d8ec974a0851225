"""The wiring: every staff page as an admin URL, behind ``site.admin_view`` and the one
permission it needs. This table is the one place that says who may use which page.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.admin import AdminSite
from django.http import HttpResponse
from django.urls import URLPattern, path
from django.utils.translation import gettext_lazy as _

from billing.staff.account_page import account_detail
from billing.staff.add_on_pages import staff_add_on, staff_remove_add_on
from billing.staff.api_keys import MANAGE_API_KEYS, api_key_revoke, api_keys
from billing.staff.batch_pages import batch_runs, upcoming
from billing.staff.catalog import product_add, product_edit, product_retire, products
from billing.staff.coupons import coupon_add, coupon_edit, coupon_end, coupons, staff_coupon
from billing.staff.data_rights_pages import staff_close_account, staff_export_data
from billing.staff.disputes import disputes
from billing.staff.lookup import index, user_billing
from billing.staff.metered_prices import staff_add_metered, staff_change_metered, staff_remove_metered
from billing.staff.meters import customer_usage, meter_add, meters
from billing.staff.pause_pages import staff_pause, staff_resume
from billing.staff.prices import price_add, price_archive, prices
from billing.staff.refunds import staff_refund
from billing.staff.revenue_pages import revenue
from billing.staff.seats_pages import staff_seats
from billing.staff.seller_pages import business_tax
from billing.staff.subscription_actions import staff_cancel, staff_payment_day, staff_retry
from billing.staff.switch_pages import staff_switch
from billing.staff.tax_report_page import tax_report
from billing.staff.webhook_endpoints import (
    webhook_delivery_resend,
    webhook_endpoint,
    webhook_endpoint_add,
    webhook_endpoint_rotate,
    webhook_endpoint_status,
    webhook_endpoint_test,
    webhook_endpoints,
)
from billing.staff.webhook_events import webhook_events
from core.staff import CANCEL, CATALOG, CHANGE_DAY, INTEGRATIONS, MONEY, VIEW_BILLING, permission_required

# The pages the admin's index and sidebar list, under "Billing" (rpay_site/admin_site.py):
# (URL name, label, the permission it needs, URL name of its "Add" link or None).
STAFF_PAGES = [
    ("staff_index", _("Find a customer"), VIEW_BILLING, None),
    ("staff_upcoming", _("Upcoming payments and reminders"), VIEW_BILLING, None),
    ("staff_runs", _("Batch runs"), VIEW_BILLING, None),
    ("staff_disputes", _("Disputes"), VIEW_BILLING, None),
    ("staff_webhook_events", _("Webhook events"), VIEW_BILLING, None),
    ("staff_webhook_endpoints", _("Webhook endpoints"), (VIEW_BILLING, INTEGRATIONS), "staff_webhook_endpoint_add"),
    ("staff_products", _("Product catalog"), CATALOG, "staff_product_add"),
    # a product's prices: seen by the catalog role beside its products, changed by finance and admin
    ("staff_prices", _("Prices"), (CATALOG, MONEY, INTEGRATIONS), None),
    ("staff_coupons", _("Coupons"), (VIEW_BILLING, CATALOG), None),
    ("staff_api_keys", _("API keys"), MANAGE_API_KEYS, None),
    ("staff_business_tax", _("Business & tax"), (VIEW_BILLING, MONEY), None),
    ("staff_tax_report", _("Tax report"), MONEY, None),
    # MRR, churn and cohorts: the finance role's, and the admin role's (the business's figures)
    ("staff_revenue", _("Revenue"), (MONEY, INTEGRATIONS), None),
    # metered usage: what customers are charged for, as prices are (finance and admin)
    ("staff_meters", _("Meters"), (MONEY, INTEGRATIONS), "staff_meter_add"),
]


def staff_urls(site: AdminSite) -> list[URLPattern]:
    """The staff pages as admin URLs: ``admin_view`` sends anyone but active staff to the
    admin log-in and adds the admin's CSRF and cache protections; then each page checks
    its own permission (403 page otherwise)."""

    def staff(view: Callable[..., HttpResponse], perm: str | tuple[str, ...]) -> Callable[..., HttpResponse]:
        return site.admin_view(permission_required(perm)(view))

    sub = "staff/accounts/<str:account_id>/subscriptions/<str:sub_id>"
    return [
        path("staff/", staff(index, VIEW_BILLING), name="staff_index"),
        path("staff/users/<int:user_id>/", staff(user_billing, VIEW_BILLING), name="staff_user_billing"),
        path("staff/accounts/<str:account_id>/", staff(account_detail, VIEW_BILLING), name="staff_account"),
        # data rights: the support role, which cancels (docs/PORTAL.md, "Your data")
        path("staff/accounts/<str:account_id>/data-export/", staff(staff_export_data, CANCEL),
             name="staff_export_data"),
        path("staff/accounts/<str:account_id>/close/", staff(staff_close_account, CANCEL),
             name="staff_close_account"),
        path(f"{sub}/cancel/", staff(staff_cancel, CANCEL), name="staff_cancel"),
        path(f"{sub}/payment-day/", staff(staff_payment_day, CHANGE_DAY), name="staff_payment_day"),
        path(f"{sub}/retry/", staff(staff_retry, MONEY), name="staff_retry"),
        path(f"{sub}/switch/", staff(staff_switch, MONEY), name="staff_switch"),
        # more seats charge the card now, fewer refund to it: the money role's, as a switch
        path(f"{sub}/seats/", staff(staff_seats, MONEY), name="staff_seats"),
        # what the card is charged from the next payment: the money role's, as seats
        path(f"{sub}/add-ons/", staff(staff_add_on, MONEY), name="staff_add_ons"),
        path(f"{sub}/add-ons/remove/", staff(staff_remove_add_on, MONEY), name="staff_remove_add_on"),
        path(f"{sub}/coupon/", staff(staff_coupon, MONEY), name="staff_coupon"),
        # a meter's usage billed from the next payment on: the money role's, as seats
        path(f"{sub}/metered-prices/", staff(staff_add_metered, MONEY), name="staff_add_metered"),
        path(f"{sub}/metered-prices/remove/", staff(staff_remove_metered, MONEY), name="staff_remove_metered"),
        path(f"{sub}/metered-prices/change/", staff(staff_change_metered, MONEY), name="staff_change_metered"),
        # a pause moves the schedule as a change of day does: the same permission
        path(f"{sub}/pause/", staff(staff_pause, CHANGE_DAY), name="staff_pause"),
        path(f"{sub}/resume/", staff(staff_resume, CHANGE_DAY), name="staff_resume"),
        path("staff/accounts/<str:account_id>/receipts/<str:receipt_sk>/refund/", staff(staff_refund, MONEY),
             name="staff_refund"),
        path("staff/upcoming/", staff(upcoming, VIEW_BILLING), name="staff_upcoming"),
        path("staff/runs/", staff(batch_runs, VIEW_BILLING), name="staff_runs"),
        path("staff/disputes/", staff(disputes, VIEW_BILLING), name="staff_disputes"),
        path("staff/webhook-events/", staff(webhook_events, VIEW_BILLING), name="staff_webhook_events"),
        # The merchant's webhook endpoints: seen by whoever sees billing, changed by the admin role.
        path("staff/webhooks/", staff(webhook_endpoints, (VIEW_BILLING, INTEGRATIONS)), name="staff_webhook_endpoints"),
        path("staff/webhooks/add/", staff(webhook_endpoint_add, INTEGRATIONS), name="staff_webhook_endpoint_add"),
        path("staff/webhooks/<str:endpoint_id>/", staff(webhook_endpoint, (VIEW_BILLING, INTEGRATIONS)),
             name="staff_webhook_endpoint"),
        path("staff/webhooks/<str:endpoint_id>/rotate/", staff(webhook_endpoint_rotate, INTEGRATIONS),
             name="staff_webhook_endpoint_rotate"),
        path("staff/webhooks/<str:endpoint_id>/status/", staff(webhook_endpoint_status, INTEGRATIONS),
             name="staff_webhook_endpoint_status"),
        path("staff/webhooks/<str:endpoint_id>/test/", staff(webhook_endpoint_test, INTEGRATIONS),
             name="staff_webhook_endpoint_test"),
        path("staff/webhooks/<str:endpoint_id>/deliveries/<str:position>/resend/",
             staff(webhook_delivery_resend, INTEGRATIONS), name="staff_webhook_delivery_resend"),
        path("staff/products/", staff(products, CATALOG), name="staff_products"),
        path("staff/products/add/", staff(product_add, CATALOG), name="staff_product_add"),
        path("staff/products/<str:sku>/edit/", staff(product_edit, CATALOG), name="staff_product_edit"),
        path("staff/products/<str:sku>/retire/", staff(product_retire, CATALOG), name="staff_product_retire"),
        # prices: what customers are charged is money (finance), and the admin role's
        path("staff/prices/", staff(prices, (CATALOG, MONEY, INTEGRATIONS)), name="staff_prices"),
        path("staff/products/<str:sku>/prices/add/", staff(price_add, (MONEY, INTEGRATIONS)), name="staff_price_add"),
        path("staff/prices/<str:price_id>/archive/", staff(price_archive, (MONEY, INTEGRATIONS)),
             name="staff_price_archive"),
        # Listing coupons is for anyone who sees billing, and for the catalog role, which
        # makes and changes them (and comes back to the list after each change).
        path("staff/coupons/", staff(coupons, (VIEW_BILLING, CATALOG)), name="staff_coupons"),
        path("staff/coupons/add/", staff(coupon_add, CATALOG), name="staff_coupon_add"),
        path("staff/coupons/<str:code>/edit/", staff(coupon_edit, CATALOG), name="staff_coupon_edit"),
        path("staff/coupons/<str:code>/end/", staff(coupon_end, CATALOG), name="staff_coupon_end"),
        # the REST API's keys: the admin role only (a superuser)
        path("staff/api-keys/", staff(api_keys, MANAGE_API_KEYS), name="staff_api_keys"),
        path("staff/api-keys/<str:key_id>/revoke/", staff(api_key_revoke, MANAGE_API_KEYS),
             name="staff_api_key_revoke"),
        # Read by anyone who sees billing; saved only by the finance role (checked by the
        # page on POST: 403 otherwise), as refunds are.
        path("staff/business-tax/", staff(business_tax, (VIEW_BILLING, MONEY)), name="staff_business_tax"),
        # the quarter's VAT: the finance role, which answers for the money
        path("staff/tax-report/", staff(tax_report, MONEY), name="staff_tax_report"),
        # MRR, churn and cohorts: the finance role's, as the tax report
        path("staff/revenue/", staff(revenue, (MONEY, INTEGRATIONS)), name="staff_revenue"),
        path("staff/meters/", staff(meters, (MONEY, INTEGRATIONS)), name="staff_meters"),
        path("staff/meters/add/", staff(meter_add, (MONEY, INTEGRATIONS)), name="staff_meter_add"),
        path("staff/accounts/<str:account_id>/usage/", staff(customer_usage, VIEW_BILLING),
             name="staff_customer_usage"),
    ]
