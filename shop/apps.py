from django.apps import AppConfig


class ShopConfig(AppConfig):
    """The online shop (docs/SHOP.md): its own table on the engine billing configures
    (listed after billing in INSTALLED_APPS, so billing's ``ready`` has run)."""

    name = "shop"
    verbose_name = "Online shop"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        from shop.models import configure
        from shop.tables import register_shop_table

        configure(table_name=settings.SHOP_DYNAMODB_TABLE)
        register_shop_table()
        from core.staff import StaffSection, register_staff_section
        from shop.staff import SHOP_STAFF_PAGES, shop_staff_urls

        register_staff_section(StaffSection(urls=shop_staff_urls, pages=SHOP_STAFF_PAGES))
        from billing.customers import register_account_data
        from shop.data_rights import SHOP_DATA

        register_account_data(SHOP_DATA)
