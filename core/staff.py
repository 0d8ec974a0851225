"""The staff permissions and the check every staff URL makes (wired once, in ``urls``).

Roles are Django groups made by billing/migrations/0003_staff_roles.py:

* ``support``: ``VIEW_BILLING``, ``CANCEL``, ``CHANGE_DAY``
* ``finance``: ``VIEW_BILLING``, ``MONEY`` (refund, retry now)
* ``catalog``: ``CATALOG`` (products and prices)
* ``admin``: ``VIEW_BILLING``, ``INTEGRATIONS`` (webhook endpoints, API keys)

A superuser has every permission. A staff user with none reaches the admin but no
billing page: each answers 403 with a page in the admin's look that names what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.models import Permission
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _


def render_staff(request: HttpRequest, template: str, title: str, context: dict[str, Any] | None = None,
                 status: int = 200) -> HttpResponse:
    """Render inside the admin's own context (site header, user links, sidebar), so the
    staff pages look native. Templates show only the actions the user may take, through
    Django's ``perms`` (e.g. ``perms.billing.manage_money``)."""
    from django.contrib import admin

    ctx = {**admin.site.each_context(request), "title": title, **(context or {})}
    return render(request, template, ctx, status=status)



VIEW_BILLING = "billing.view_billing"
CANCEL = "billing.cancel_subscription"
CHANGE_DAY = "billing.change_payment_day"
MONEY = "billing.manage_money"
CATALOG = "billing.manage_catalog"
INTEGRATIONS = "billing.manage_integrations"

# Which role to ask for, named on the 403 page. The roles are the groups' names, which
# stay as they are in every language.
ROLE_OF = {VIEW_BILLING: _("support or finance"), CANCEL: "support", CHANGE_DAY: "support",
           MONEY: "finance", CATALOG: "catalog", INTEGRATIONS: "admin"}


# The permissions' names as billing/models.py stores them (English, in the database):
# marked here so that the 403 page shows them in the staff user's language.
STORED_NAMES = (
    gettext_noop("Can view customers' billing pages, upcoming payments and batch runs"),
    gettext_noop("Can cancel a customer's subscription"),
    gettext_noop("Can change a subscription's payment day"),
    gettext_noop("Can refund and retry payments"),
    gettext_noop("Can add, edit and retire products"),
    gettext_noop("Can manage webhook endpoints and API keys"),
)


def _permission_name(perm: str) -> str:
    app_label, codename = perm.split(".", 1)
    found = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
    return gettext(found.name) if found else perm


def forbidden(request: HttpRequest, perm: str) -> HttpResponse:
    """The 403 page: what is missing and which role has it, inside the admin."""
    return render_staff(request, "staff/forbidden.html", gettext("Permission needed"), {
        "permission": perm, "permission_name": _permission_name(perm), "role": ROLE_OF.get(perm, ""),
    }, status=403)


def has_any_perm(user: Any, perm: str | tuple[str, ...]) -> bool:
    """Whether ``user`` has ``perm``, or (a tuple) any one of them."""
    return any(user.has_perm(p) for p in ((perm,) if isinstance(perm, str) else perm))


def permission_required(perm: str | tuple[str, ...]) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A view that answers the 403 page unless the user has ``perm`` (a tuple: any of them)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not has_any_perm(request.user, perm):
                return forbidden(request, perm if isinstance(perm, str) else perm[0])
            return view(request, *args, **kwargs)

        checked.staff_permission = perm  # the matrix test reads it back from the URL patterns
        return checked

    return decorate


@dataclass(frozen=True)
class StaffSection:
    """An app's staff pages: ``urls(site)`` gives them as admin URLs, and ``pages`` lists
    the ones the admin's index and sidebar show, as (URL name, label, the permission it
    needs, URL name of its "Add" link or None)."""

    urls: Callable[[Any], list[Any]]
    pages: list[tuple[str, Any, str | tuple[str, ...], str | None]]


_SECTIONS: list[StaffSection] = []


def register_staff_section(section: StaffSection) -> None:
    """Add an app's staff pages to the admin site (from its ``AppConfig.ready``)."""
    if section not in _SECTIONS:
        _SECTIONS.append(section)


def staff_sections() -> list[StaffSection]:
    return list(_SECTIONS)
