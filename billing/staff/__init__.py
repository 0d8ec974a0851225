"""Staff pages, mounted inside the Django admin site (DESIGN.md §5).

``StaffAdminSite`` (``site``) is the project's admin site: ``get_urls`` adds the staff
pages (``staff_urls``), each wrapped in ``site.admin_view`` (only active staff; everyone
else is sent to the admin log-in) and in the check of its own permission
(``permissions``: support, finance and catalog roles; 403 page otherwise). Every change
goes through ``billing.access`` and leaves an audit event with before/after snapshots.

One module per group of pages (``lookup``, ``account_page``, ``subscription_actions``,
``refunds``, ``batch_pages``, ``catalog``) over what they share (``common``), wired
up in ``urls``. The package's API is the site, ``staff_urls``, the permission names and
``event_changes`` (how an audit event's changes are shown).
"""


from billing.staff.account_page import event_changes
from billing.staff.permissions import CANCEL, CATALOG, CHANGE_DAY, MONEY, VIEW_BILLING
from billing.staff.site import StaffAdminSite
from billing.staff.urls import staff_urls

__all__ = ["CANCEL", "CATALOG", "CHANGE_DAY", "MONEY", "VIEW_BILLING", "StaffAdminSite", "event_changes",
           "staff_urls"]
