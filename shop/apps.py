from django.apps import AppConfig


class ShopConfig(AppConfig):
    """The online shop (SHOP-DESIGN.md); its table is configured with billing's (billing/apps.py)."""

    name = "shop"
    verbose_name = "Online shop"
    default_auto_field = "django.db.models.BigAutoField"
