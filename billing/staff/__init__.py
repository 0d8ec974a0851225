"""Staff pages, mounted inside the Django admin site (DESIGN.md §5).

``staff_urls(site)`` returns URL patterns that ``billing.admin`` prepends to the admin
site's own; each view is wrapped in ``site.admin_view`` so only active staff reach it
(everyone else is sent to the admin log-in). Refunds and retry-now also need the
``billing.manage_money`` permission. Every change goes through ``billing.access`` and
leaves an audit event with before/after snapshots.

One module per group of pages (``lookup``, ``account_page``, ``subscription_actions``,
``refunds``, ``batch_pages``, ``catalog``) over what they share (``common``), wired
up in ``urls``. The package's API is ``staff_urls`` (for the admin site), the money
permission and ``event_changes`` (how an audit event's changes are shown).
"""


from .account_page import event_changes
from .common import MONEY_PERMISSION
from .urls import staff_urls

__all__ = ["MONEY_PERMISSION", "event_changes", "staff_urls"]
