"""The shop's table as a NoSQL Workbench table model (the format of the seed's
AnOnlineShop_14.json), generated from the PynamoDB models so it cannot drift: built by
``core.dynamo.workbench`` from the models, one facet per entity with the seed's sample as its items.
``export_workbench_model --table shop|all`` writes it."""

from __future__ import annotations

from typing import Any

from core.dynamo import workbench
from shop.access.checkout_writes import journal_entry
from shop.access.gift_card_ledger import ledger_entry
from shop.access.sample import sample_items
from shop.ids import gift_card_hash
from shop.models import ENTITIES, DiscountCode, GiftCard, GiftCardEntryKind, ShopItem


def _samples() -> dict[type[ShopItem], list[ShopItem]]:
    by_entity: dict[type[ShopItem], list[ShopItem]] = {}
    extra = [
        DiscountCode(**DiscountCode.keys(code="WELCOME10"), Code="WELCOME10", PercentOff=10, MaxUses=100, Uses=3),
        GiftCard(**GiftCard.keys(code_hash=gift_card_hash("DEMO-GIFT-CARD-0001")), Balance=50000, Currency="SEK",
                 Last4="0001", IssuedAt="2020-06-01T00:00:00Z"),
        journal_entry("3f2a9c0d5e7b4a11", "checkout", "2020-06-21T19:30:00Z"),
        ledger_entry(gift_card_hash("DEMO-GIFT-CARD-0001"), GiftCardEntryKind.ISSUED, 50000, "SEK",
                     "staff@example.com", at="2020-06-01T00:00:00.000000Z"),
    ]
    for item in [*sample_items("ch_sim_5e1f0c9a7d2b"), *extra]:
        by_entity.setdefault(type(item), []).append(item)
    return by_entity


NAME = "rpay online shop"
DESCRIPTION = "Generated from shop/models.py (docs/SHOP.md)."


def shop_table_model() -> dict[str, Any]:
    """The shop table's entry of a Workbench model's ``DataModel`` list."""
    return workbench.table_model(
        ShopItem, ENTITIES, _samples(),
        facet_name=lambda entity: entity.get_attributes()["EntityType"].get_discriminator(entity),
        key_aliases=lambda entity: (entity.key_templates["PK"].template, entity.key_templates["SK"].template))
