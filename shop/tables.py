"""The shop's table as the engine knows it (registered by shop/apps.py): what
``setup_dynamodb``, ``seed_demo`` and ``export_workbench_model`` do with it."""

from __future__ import annotations

from typing import Any

from core.dynamo.table import RegisteredTable, enable_ttl, register, ttl_status
from shop.demo import seed_shop, shop_table_exists
from shop.models import Invoice, ShopItem
from shop.workbench import DESCRIPTION, NAME, shop_table_model


def seed_demo(password: str) -> list[str]:
    """The shop's demo data: the seed's sample with its ids (shop/demo.py)."""
    if not shop_table_exists():
        return ["shop: its table is missing (run setup_dynamodb); not seeded"]
    return seed_shop(password)


def prepare_table(ttl: bool = True, **_options: Any) -> dict[str, Any]:
    """After the table exists: a closed account's invoices expire through ``TTL`` at the
    end of their tax retention (``ttl=False``: left as it is, for the report)."""
    return {"ttl": enable_ttl(ShopItem, Invoice.TTL.attr_name) if ttl else ttl_status(ShopItem)}


def register_shop_table() -> None:
    register(RegisteredTable(
        label="shop", base=ShopItem, description="the shop's table", prepare=prepare_table,
        ttl_attribute=Invoice.TTL.attr_name, workbench=shop_table_model,
        workbench_name=NAME, workbench_description=DESCRIPTION, seed_demo=seed_demo))
