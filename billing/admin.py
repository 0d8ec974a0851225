"""Registrations on the project's admin site (``rpay_site.admin_site.StaffAdminSite``, the
default site through ``RpayAdminConfig``): the user admin links each user to their
billing page.

Billing has no Django models to register; ``BillingPermission`` only holds the staff
permissions and is deliberately not registered.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.urls import reverse
from django.utils.html import format_html

User = get_user_model()


class BillingUserAdmin(UserAdmin):
    """Django's user admin plus a link to the customer's billing page."""

    list_display = (*UserAdmin.list_display, "billing_link")

    @admin.display(description="Billing")
    def billing_link(self, obj) -> str:
        # A link, not a look-up: resolving the account costs a GetItem per row.
        return format_html('<a href="{}">billing page</a>', reverse("admin:staff_user_billing", args=[obj.pk]))


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, BillingUserAdmin)
