"""Stock per product and warehouse: patterns 4 and 14, the product with its stock (the
checkout's read), and staff adjustments.

Every write keeps ``Available = OnHand - Reserved`` (see ``WarehouseItem``)."""

from __future__ import annotations

from django.utils.translation import gettext
from pynamodb.exceptions import PutError, UpdateError

from shop.access._common import all_valid
from shop.errors import InvalidInput
from shop.ids import check_id
from shop.models import Product, ShopItem, WarehouseItem


def get_product_inventory_by_product_id(product_id: str) -> list[WarehouseItem]:
    """Pattern 4: Query PK = p#<productId>, SK begins_with w#."""
    if not all_valid(product_id):
        return []
    pk = WarehouseItem.pk(product_id=product_id)
    return list(WarehouseItem.query(pk, WarehouseItem.SK.startswith(WarehouseItem.key_templates["SK"].prefix)))


def get_product_with_inventory(product_id: str) -> tuple[Product | None, list[WarehouseItem]]:
    """The product and its stock in every warehouse: one Query of the product's partition
    (PK = p#<productId>: the product item, SK p#, and its stock items, SK w#, are all that
    live there). The checkout reads a line's price and stock with it."""
    if not all_valid(product_id):
        return None, []
    product, stock = None, []
    for item in ShopItem.query(WarehouseItem.pk(product_id=product_id)):
        if isinstance(item, Product):
            product = item
        elif isinstance(item, WarehouseItem):
            stock.append(item)
    return product, stock


def get_product_inventory_by_warehouse_id(warehouse_id: str) -> list[WarehouseItem]:
    """Pattern 14: Query GSI2-PK = w#<warehouseId>, GSI2-SK begins_with p#."""
    if not all_valid(warehouse_id):
        return []
    templates = WarehouseItem.key_templates
    pk = templates["GSI2PK"].format(warehouse_id=warehouse_id)
    rows = ShopItem.gsi2.query(pk, ShopItem.GSI2SK.startswith(templates["GSI2SK"].prefix))
    return [r for r in rows if isinstance(r, WarehouseItem)]


def put_stock(product_id: str, warehouse_id: str, on_hand: int) -> WarehouseItem:
    """Start stocking a product in a warehouse (written once; then ``adjust_stock``)."""
    check_id(product_id, "product id")
    check_id(warehouse_id, "warehouse id")
    if not isinstance(on_hand, int) or on_hand < 0:
        raise InvalidInput(gettext("Stock must be a whole number, zero or more."), field="quantity")
    item = WarehouseItem(**WarehouseItem.keys(product_id=product_id, warehouse_id=warehouse_id),
                         OnHand=on_hand, Reserved=0, Available=on_hand)
    try:
        item.save(condition=WarehouseItem.PK.does_not_exist())
    except PutError as error:
        raise InvalidInput(gettext("This product is already stocked there: adjust its stock instead.")) from error
    return item


def adjust_stock(product_id: str, warehouse_id: str, delta: int) -> WarehouseItem:
    """Goods received (+) or written off (-); never below what is reserved for orders."""
    check_id(product_id, "product id")
    check_id(warehouse_id, "warehouse id")
    if not isinstance(delta, int) or delta == 0:
        raise InvalidInput(gettext("The change must be a whole number other than zero."), field="quantity")
    item = WarehouseItem(**WarehouseItem.keys(product_id=product_id, warehouse_id=warehouse_id))
    condition = WarehouseItem.PK.exists()
    if delta < 0:
        condition &= WarehouseItem.Available >= -delta
    try:
        item.update(actions=[WarehouseItem.OnHand.add(delta), WarehouseItem.Available.add(delta)],
                    condition=condition)
    except UpdateError as error:
        raise InvalidInput(gettext("Not that much unreserved stock there (or the product is not stocked there)."),
                           field="quantity") from error
    return item
