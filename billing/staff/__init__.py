"""Staff pages, mounted inside the Django admin site (docs/DEVELOPMENT.md, "The rules of the layout").

The project's admin site (rpay_site/admin_site.py) adds the staff pages
(``staff_urls``, registered by billing/apps.py), each wrapped in ``site.admin_view`` (only active staff; everyone
else is sent to the admin log-in) and in the check of its own permission
(``permissions``: support, finance and catalog roles; 403 page otherwise). Every change
goes through ``billing.access`` and leaves an audit event with before/after snapshots.

One module per group of pages (``lookup``, ``account_page``, ``subscription_actions``,
``refunds``, ``batch_pages``, ``catalog``) over what they share (``common``), wired
up in ``urls``. The package's API is ``staff_urls``, the permission names and
``event_changes`` (how an audit event's changes are shown).
"""


from billing.staff.account_page import event_changes
from billing.staff.urls import staff_urls
from core.staff import CANCEL, CATALOG, CHANGE_DAY, INTEGRATIONS, MONEY, VIEW_BILLING

__all__ = ["CANCEL", "CATALOG", "CHANGE_DAY", "INTEGRATIONS", "MONEY", "VIEW_BILLING", "event_changes",
           "staff_urls"]
