"""What the shop's customer pages share: the cart in the session, the checkout token,
the order look-up that answers 404 across accounts, and the shop's own e-mails."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest
from django.utils.translation import gettext

from shop import access
from shop.access import OrderDetails
from shop.ids import is_valid_id
from shop.plan import MAX_LINES, MAX_QUANTITY

SESSION_CART = "shop_cart"  # {product id: {"quantity": n, "price": minor units seen, "currency": ...}}
SESSION_TOKEN = "shop_checkout_token"
DEFAULT_CATEGORIES = ("books", "music")
FEW_LEFT = 10  # at most this many: "3 left"; more: "In stock"


def categories() -> tuple[str, ...]:
    """The catalogue's categories (there is no listing of them without a Scan)."""
    return tuple(getattr(settings, "SHOP_CATEGORIES", DEFAULT_CATEGORIES))


def availability(stock: int) -> str:
    if stock <= 0:
        return gettext("Out of stock")
    return gettext("%(count)s left") % {"count": stock} if stock <= FEW_LEFT else gettext("In stock")


def stock_of(product_id: str) -> int:
    """A product's stock over every warehouse, summed (access pattern 4: one Query)."""
    return sum(s.Available for s in access.get_product_inventory_by_product_id(product_id))


def too_many(stock: int) -> str:
    """Why a quantity above the stock is refused: the product page and the cart say it alike."""
    if not stock:
        return gettext("This product is out of stock.")
    return gettext("Only %(count)s left: choose %(count)s or fewer in all.") % {"count": stock}


def get_cart(request: HttpRequest) -> dict[str, dict[str, Any]]:
    """The session's cart, with anything malformed (an old session, a hand-made cookie) dropped."""
    raw = request.session.get(SESSION_CART)
    if not isinstance(raw, dict):
        return {}
    cart = {}
    for product_id, line in list(raw.items())[:MAX_LINES]:
        if (is_valid_id(product_id) and isinstance(line, dict) and isinstance(line.get("quantity"), int)
                and 0 < line["quantity"] <= MAX_QUANTITY):
            cart[product_id] = line
    return cart


def save_cart(request: HttpRequest, cart: dict[str, dict[str, Any]]) -> None:
    request.session[SESSION_CART] = cart


def order_or_404(customer_id: str, order_id: str, *, consistent: bool = False) -> OrderDetails:
    """The customer's order (one Query), or 404: another account's order is simply not found."""
    details = access.get_order_details_by_order_id(order_id, consistent=consistent)
    if details is None or details.order.customer_id != customer_id:
        raise Http404("No such order")
    return details


WAREHOUSE_NAMES_MAX_AGE = 300.0  # seconds


def shipment_rows(details: OrderDetails) -> list[dict[str, Any]]:
    """Each shipment with its items (name and quantity), for the order pages."""
    names = {item.ProductId: item.Name for item in details.items}
    # The warehouses' names (one BatchGetItem, kept a few minutes: a name rarely changes);
    # the customer reads "from warehouse Leeds", not its id.
    warehouses = access.get_warehouses_by_ids([s.WarehouseId for s in details.shipments],
                                              max_age=WAREHOUSE_NAMES_MAX_AGE) if details.shipments else {}
    rows = []
    for shipment in sorted(details.shipments, key=lambda s: s.CreatedAt):
        items = [{"name": names.get(i.ProductId, i.ProductId), "quantity": i.Quantity}
                 for i in details.shipment_items if i.ShipmentId == shipment.shipment_id]
        warehouse = warehouses.get(shipment.WarehouseId)
        rows.append({"shipment": shipment, "items": items,
                     "warehouse": (warehouse.Name if warehouse else None) or shipment.WarehouseId})
    return rows
