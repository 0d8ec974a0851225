"""The shop's staff pages, inside the admin: ``shop_staff_urls(site)`` gives them as
admin URLs behind ``site.admin_view`` (active staff only, the admin's CSRF and cache
protections) and the staff roles' permissions (core.staff): looking and
fulfilment (pick list, shipments) for support and finance, products, warehouses, stock
and discount codes for the catalog role, cancel, refund and issuing gift cards for
finance."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.admin import AdminSite
from django.http import HttpResponse
from django.urls import URLPattern, path
from django.utils.translation import gettext_lazy as _

from core.staff import CATALOG, MONEY, VIEW_BILLING, permission_required
from shop.staff.catalog_pages import (
    index,
    product_add,
    product_detail,
    products,
    warehouse_add,
    warehouse_detail,
)
from shop.staff.code_pages import code_edit, code_end, codes, gift_cards
from shop.staff.order_pages import (
    customer_invoices,
    order_close,
    order_create_shipments,
    order_detail,
    pick_list,
    product_orders,
    shipment_ship,
)

__all__ = ["SHOP_STAFF_PAGES", "shop_staff_urls"]

# Listed in the admin's index and sidebar beside billing's (rpay_site/admin_site.py).
SHOP_STAFF_PAGES = [("shop_staff_index", _("Shop: orders, stock and shipments"), VIEW_BILLING, None)]


def shop_staff_urls(site: AdminSite) -> list[URLPattern]:
    def staff(view: Callable[..., HttpResponse], perm: str = VIEW_BILLING) -> Callable[..., HttpResponse]:
        return site.admin_view(permission_required(perm)(view))

    return [
        path("shop/", staff(index), name="shop_staff_index"),
        path("shop/products/", staff(products), name="shop_staff_products"),
        path("shop/products/add/", staff(product_add, CATALOG), name="shop_staff_product_add"),
        path("shop/products/<str:product_id>/", staff(product_detail, CATALOG), name="shop_staff_product"),
        path("shop/products/<str:product_id>/orders/", staff(product_orders), name="shop_staff_product_orders"),
        path("shop/warehouses/add/", staff(warehouse_add, CATALOG), name="shop_staff_warehouse_add"),
        path("shop/warehouses/<str:warehouse_id>/", staff(warehouse_detail, CATALOG), name="shop_staff_warehouse"),
        path("shop/warehouses/<str:warehouse_id>/shipments/", staff(pick_list), name="shop_staff_pick_list"),
        path("shop/orders/<str:order_id>/", staff(order_detail), name="shop_staff_order"),
        path("shop/orders/<str:order_id>/shipments/", staff(order_create_shipments),
             name="shop_staff_create_shipments"),
        path("shop/orders/<str:order_id>/<str:kind>/", staff(order_close, MONEY), name="shop_staff_close"),
        path("shop/shipments/<str:shipment_id>/ship/", staff(shipment_ship), name="shop_staff_ship"),
        path("shop/customers/<str:customer_id>/invoices/", staff(customer_invoices),
             name="shop_staff_customer_invoices"),
        path("shop/codes/", staff(codes, CATALOG), name="shop_staff_codes"),
        path("shop/codes/<str:code>/", staff(code_edit, CATALOG), name="shop_staff_code"),
        path("shop/codes/<str:code>/end/", staff(code_end, CATALOG), name="shop_staff_code_end"),
        path("shop/gift-cards/", staff(gift_cards), name="shop_staff_gift_cards"),
    ]
