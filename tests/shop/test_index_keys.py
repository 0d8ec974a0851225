"""Every shop item carries every index key its type has (the seed's sample did not)."""

from __future__ import annotations

import pytest

from shop import access
from shop.access.sample import sample_items
from shop.models import ENTITIES, ShopItem


def assert_all_index_keys(items: list[ShopItem]) -> None:
    for item in items:
        for attr in type(item).index_keys():
            assert getattr(item, attr), f"{type(item).__name__} {item.PK}/{item.SK} lacks {attr}"


def stored(items: list[ShopItem]) -> list[ShopItem]:
    """The items as stored: one Query per partition (no Scan)."""
    return [row for pk in sorted({i.PK for i in items}) for row in ShopItem.query(pk)]


def test_every_entity_declares_its_keys() -> None:
    for entity in ENTITIES:
        assert {"PK", "SK"} <= set(entity.key_templates), entity
        for attr in entity.key_templates:
            assert attr in entity.get_attributes(), (entity, attr)
        # an index key comes with its pair
        for index in ("GSI1", "GSI2"):
            assert (f"{index}PK" in entity.key_templates) == (f"{index}SK" in entity.key_templates), entity


@pytest.mark.usefixtures("seeded")
def test_the_sample_as_stored_has_every_index_key() -> None:
    rows = stored(sample_items())
    assert len(rows) == len(sample_items())
    assert_all_index_keys(rows)
    # and the warehouseItem the seed left out of GSI2 is found through GSI2
    assert [s.product_id for s in access.get_product_inventory_by_warehouse_id("12376")] == ["99887"]
