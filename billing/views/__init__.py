"""The customer portal: accounts, dashboard, subscribe, manage, receipts.

Every page works on the logged-in customer's own account: its id comes from the
session (put there at log-in / sign-up), never from the URL, so another customer's
subscription or receipt id simply isn't found (404). All billing data is read and
written through ``billing.access``.

One module per group of pages (``auth_pages``, ``dashboard_pages``, ``subscribe_pages``,
``manage_pages``, ``usage_pages``, ``switch_pages``, ``seats_pages``, ``add_on_pages``, ``confirm_payment_pages``, ``lifecycle_pages``, ``wallet_pages``, ``receipt_pages``, ``credit_note_pages``, ``error_pages``) over what they share (``common``,
``cards``, and ``core.pages`` with the staff pages). This package's API is the views
that ``billing.urls`` and the error handlers name.
"""

from billing.views.add_on_pages import add_ons
from billing.views.auth_pages import LoginView, signup, signup_confirm
from billing.views.confirm_payment_pages import confirm_payment
from billing.views.credit_note_pages import credit_note_detail, credit_note_pdf
from billing.views.dashboard_pages import dashboard, home
from billing.views.data_rights_pages import account_closed, close_account, download_data
from billing.views.error_pages import page_not_found, server_error
from billing.views.language_pages import set_language
from billing.views.lifecycle_pages import cancel, keep, pause, resume
from billing.views.manage_pages import cancelled, change_day, replace_card, subscription_detail
from billing.views.receipt_pages import receipt_detail, receipt_pdf, receipts, receipts_csv
from billing.views.seats_pages import change_seats
from billing.views.subscribe_pages import subscribe, subscribe_authenticate, subscribe_confirm
from billing.views.switch_pages import switch_product
from billing.views.tax_identity_pages import billing_details
from billing.views.usage_pages import subscription_usage
from billing.views.wallet_pages import (
    choose_card,
    wallet_add,
    wallet_default,
    wallet_page,
    wallet_remove,
    wallet_replace,
    wallet_save,
)
from billing.views.webhook_pages import stripe_webhook

__all__ = [
    "LoginView",
    "signup",
    "signup_confirm",
    "confirm_payment",
    "dashboard",
    "account_closed",
    "billing_details",
    "close_account",
    "download_data",
    "home",
    "page_not_found",
    "server_error",
    "set_language",
    "cancel",
    "keep",
    "pause",
    "resume",
    "cancelled",
    "change_day",
    "replace_card",
    "subscription_detail",
    "subscription_usage",
    "credit_note_detail",
    "credit_note_pdf",
    "receipt_detail",
    "receipt_pdf",
    "receipts",
    "receipts_csv",
    "subscribe",
    "switch_product",
    "change_seats",
    "add_ons",
    "subscribe_authenticate",
    "subscribe_confirm",
    "stripe_webhook",
    "choose_card",
    "wallet_add",
    "wallet_default",
    "wallet_page",
    "wallet_remove",
    "wallet_save",
    "wallet_replace",
]
