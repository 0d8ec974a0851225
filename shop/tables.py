"""The shop's table as the engine knows it (registered by shop/apps.py): what
``setup_dynamodb``, ``seed_demo`` and ``export_workbench_model`` do with it."""

from __future__ import annotations

from core.dynamo.table import RegisteredTable, register
from shop.demo import seed_shop, shop_table_exists
from shop.models import ShopItem
from shop.workbench import DESCRIPTION, NAME, shop_table_model


def seed_demo(password: str) -> list[str]:
    """The shop's demo data: the seed's sample with its ids (shop/demo.py)."""
    if not shop_table_exists():
        return ["shop: its table is missing (run setup_dynamodb); not seeded"]
    return seed_shop(password)


def register_shop_table() -> None:
    register(RegisteredTable(
        label="shop", base=ShopItem, description="the shop's table", workbench=shop_table_model,
        workbench_name=NAME, workbench_description=DESCRIPTION, seed_demo=seed_demo))
