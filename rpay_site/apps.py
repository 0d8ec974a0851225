from django.contrib.admin import apps as admin_apps


class RpayAdminConfig(admin_apps.AdminConfig):
    """``django.contrib.admin`` with the project's site (rpay_site/admin_site.py) as the
    default one (listed in INSTALLED_APPS in its place)."""

    default_site = "rpay_site.admin_site.StaffAdminSite"
