"""The customer portal: accounts, dashboard, subscribe, manage, receipts.

Every page works on the logged-in customer's own account: its id comes from the
session (put there at log-in / sign-up), never from the URL, so another customer's
subscription or receipt id simply isn't found (404). All billing data is read and
written through ``billing.access``.

One module per group of pages (``auth_pages``, ``dashboard_pages``, ``subscribe_pages``,
``manage_pages``, ``receipt_pages``, ``error_pages``) over what they share (``_common``,
``cards``); this package re-exports the views, so ``billing.urls`` and the
``billing.views.page_not_found``/``server_error`` handlers keep working.
"""

from ._common import (
    RECEIPT_MONTHS,
    SESSION_ACCOUNT,
    SESSION_PENDING,
    STALE_MESSAGE,
    actor,
    customer_required,
    remember_account,
    today,
)
from .auth_pages import LoginView, signup
from .dashboard_pages import dashboard, home, monthly_totals, upcoming_payments
from .error_pages import page_not_found, server_error
from .manage_pages import (
    PAYMENT_IN_PROGRESS_MESSAGE,
    cancel,
    cancelled,
    change_day,
    replace_card,
    subscription_detail,
)
from .receipt_pages import CSV_COLUMNS, group_by_month, receipt_detail, receipts, receipts_csv
from .subscribe_pages import subscribe, subscribe_confirm

__all__ = [
    "RECEIPT_MONTHS",
    "SESSION_ACCOUNT",
    "SESSION_PENDING",
    "STALE_MESSAGE",
    "actor",
    "customer_required",
    "remember_account",
    "today",
    "LoginView",
    "signup",
    "dashboard",
    "home",
    "monthly_totals",
    "upcoming_payments",
    "page_not_found",
    "server_error",
    "PAYMENT_IN_PROGRESS_MESSAGE",
    "cancel",
    "cancelled",
    "change_day",
    "replace_card",
    "subscription_detail",
    "CSV_COLUMNS",
    "group_by_month",
    "receipt_detail",
    "receipts",
    "receipts_csv",
    "subscribe",
    "subscribe_confirm",
]
