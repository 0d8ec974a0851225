"""The project's admin site: Django's ``AdminSite`` plus the staff pages each app hands
in (``core.staff.register_staff_section``, from the apps' ``ready``).

``RpayAdminConfig`` (rpay_site/apps.py, in INSTALLED_APPS) makes this the default site, so ``admin.site``,
``admin.register`` and ``admin.site.urls`` all mean it (Django's "overriding the default
admin site"). Its index and navigation sidebar list the billing pages the user may open,
as a "Billing" section among the apps; a staff user with only a billing role therefore
sees their pages there, not "You don't have permission to view or edit anything".
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite
from django.http import HttpRequest
from django.urls import URLPattern, URLResolver, reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.staff import has_any_perm, staff_sections


class StaffAdminSite(AdminSite):
    # Staff work in rpay, not in "Django administration": the heading of every admin page,
    # the browser tab's title and the index's heading say so (lazy: in the request's language).
    site_header = _("rpay staff")
    site_title = _("rpay staff")
    index_title = _("rpay staff pages")

    def get_urls(self) -> list[URLPattern | URLResolver]:
        # The apps' first: the admin's own patterns end in a catch-all for app labels.
        return [url for section in staff_sections() for url in section.urls(self)] + super().get_urls()

    def billing_app(self, request: HttpRequest) -> dict[str, Any] | None:
        """The billing pages this user may open, shaped like an entry of ``get_app_list``."""
        pages = [{
            "name": label, "object_name": name, "perms": {"view": True},
            "admin_url": reverse(f"admin:{name}", current_app=self.name),
            "add_url": reverse(f"admin:{add}", current_app=self.name) if add else None,
            "view_only": True,
        } for section in staff_sections() for name, label, perm, add in section.pages
            if has_any_perm(request.user, perm)]
        if not pages:
            return None
        return {"name": gettext("Billing"), "app_label": "billing", "app_url": pages[0]["admin_url"],
                "has_module_perms": True, "models": pages}

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        app_list = super().get_app_list(request, app_label)
        billing = self.billing_app(request) if app_label in (None, "billing") else None
        # Billing first: it is what staff come for.
        return [billing, *app_list] if billing else app_list
