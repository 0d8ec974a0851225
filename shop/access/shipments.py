"""Shipments: patterns 12 and 13 (the writes are in ``shop.access.fulfilment``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from shop.access._common import all_valid
from shop.models import Shipment, ShipmentItem, ShopItem


@dataclass
class ShipmentDetails:
    shipment: Shipment | None = None
    items: list[ShipmentItem] = field(default_factory=list)


def get_shipment_details_by_shipment_id(shipment_id: str) -> ShipmentDetails | None:
    """Pattern 12: Query GSI1-PK = sh#<shipmentId> alone, so the shipment and its items
    come back together (the seed's ``SK = shipmentId`` would miss the items)."""
    if not all_valid(shipment_id):
        return None
    details = ShipmentDetails()
    for row in ShopItem.gsi1.query(Shipment.key_templates["GSI1PK"].format(shipment_id=shipment_id)):
        if isinstance(row, Shipment):
            details.shipment = row
        elif isinstance(row, ShipmentItem):
            details.items.append(row)
    return details if details.shipment is not None else None


def get_shipment_by_warehouse_id(warehouse_id: str, since: str = "") -> list[Shipment]:
    """Pattern 13: Query GSI2-PK = w#<warehouseId>, GSI2-SK begins_with sh# (by date;
    ``since``, an ISO date or timestamp, gives today's pick list)."""
    if not all_valid(warehouse_id):
        return []
    templates = Shipment.key_templates
    pk = templates["GSI2PK"].format(warehouse_id=warehouse_id)
    prefix = templates["GSI2SK"].prefix
    condition = (ShopItem.GSI2SK.between(prefix + since, prefix + "~") if since
                 else ShopItem.GSI2SK.startswith(prefix))
    return [r for r in ShopItem.gsi2.query(pk, condition) if isinstance(r, Shipment)]
