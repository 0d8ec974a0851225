"""Staff pages, mounted inside the Django admin site (DESIGN.md §5).

``staff_urls(site)`` returns URL patterns that ``billing.admin`` prepends to the admin
site's own; each view is wrapped in ``site.admin_view`` so only active staff reach it
(everyone else is sent to the admin log-in). Refunds and retry-now also need the
``billing.manage_money`` permission. Every change goes through ``billing.access`` and
leaves an audit event with before/after snapshots.

One module per group of pages (``lookup``, ``account_page``, ``subscription_actions``,
``refunds``, ``batch_pages``, ``catalogue``) over what they share (``_common``), wired
up in ``urls``; this package re-exports them, so ``billing.admin`` keeps importing
``staff_urls`` from here.
"""

from ._common import MONEY_PERMISSION
from .account_page import account_detail, event_changes
from .batch_pages import UPCOMING_DAYS, batch_runs, upcoming
from .catalogue import CATALOGUE_ACCOUNT, product_add, product_edit, product_retire, products
from .lookup import index, user_billing
from .refunds import refund
from .subscription_actions import cancel, payment_day, retry_payment
from .urls import staff_urls

__all__ = [
    "MONEY_PERMISSION",
    "account_detail",
    "event_changes",
    "UPCOMING_DAYS",
    "batch_runs",
    "upcoming",
    "CATALOGUE_ACCOUNT",
    "product_add",
    "product_edit",
    "product_retire",
    "products",
    "index",
    "user_billing",
    "refund",
    "cancel",
    "payment_day",
    "retry_payment",
    "staff_urls",
]
