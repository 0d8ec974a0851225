from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        from billing import checks  # noqa: F401  (registers the billing settings' system checks)
        from billing.models import configure

        configure(
            table_name=settings.DYNAMODB_TABLE,
            region=settings.AWS_REGION,
            host=settings.DYNAMODB_ENDPOINT,
            max_retry_attempts=settings.DYNAMODB_MAX_RETRY_ATTEMPTS,
            max_pool_connections=settings.DYNAMODB_MAX_POOL_CONNECTIONS,
            connect_timeout_seconds=settings.DYNAMODB_CONNECT_TIMEOUT,
            read_timeout_seconds=settings.DYNAMODB_READ_TIMEOUT,
        )
        # The shop's table lives on the same engine; it shares the connection above.
        from shop.models import configure as configure_shop

        configure_shop(table_name=settings.SHOP_DYNAMODB_TABLE)


class RpayAdminConfig(admin_apps.AdminConfig):
    """``django.contrib.admin`` with the project's site as the default one (listed in
    INSTALLED_APPS in its place)."""

    # Not the config Django picks for "billing" (that is BillingConfig, the only other one).
    default = False
    default_site = "billing.staff.site.StaffAdminSite"
