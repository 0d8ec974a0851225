from django.apps import AppConfig


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
        from billing.tables import register_billing_table

        register_billing_table()
        from billing.staff.urls import STAFF_PAGES, staff_urls
        from core.staff import StaffSection, register_staff_section

        register_staff_section(StaffSection(urls=staff_urls, pages=STAFF_PAGES))
        from billing.batches.metrics import run_facts
        from core.ops.metrics import register_run_source

        register_run_source(run_facts)
        from billing.batches.outbound.metrics import WEBHOOKS
        from core.ops.metrics import register_collector

        register_collector(WEBHOOKS)
