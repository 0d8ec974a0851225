"""Staff: products (category, price in minor units, currency), warehouses, and stock per
warehouse (pattern 14) and per product (pattern 4), adjusted with an audited reason."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods
from pynamodb.exceptions import PutError

from core.pages import bound_data, or_404
from shop import access
from shop.errors import InvalidInput
from shop.forms import FindForm, ProductForm, StockForm, WarehouseForm
from shop.models import Address
from shop.staff.common import audit, recent_events, render_shop_staff
from shop.views.common import categories

STOCK_ADJUSTED = "shop.adjust_stock"
FIND_TARGETS = {"order": "admin:shop_staff_order", "product": "admin:shop_staff_product",
                "warehouse": "admin:shop_staff_warehouse", "customer": "admin:shop_staff_customer_invoices"}


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    find = FindForm(request.GET or None)
    if request.GET and find.is_valid():
        return redirect(FIND_TARGETS[find.cleaned_data["kind"]], find.cleaned_data["ident"])
    return render_shop_staff(request, "index.html", _("Shop"), {"find": find, "events": recent_events(),
                                                               "shop_index": True})


@require_GET
def products(request: HttpRequest) -> HttpResponse:
    known = categories()
    category = request.GET.get("category") or (known[0] if known else "")
    return render_shop_staff(request, "products.html", _("Products"), {
        "categories": known, "category": category, "products": access.get_products_by_category(category)})


@require_http_methods(["GET", "POST"])
def product_add(request: HttpRequest) -> HttpResponse:
    form = ProductForm(bound_data(request), categories=categories())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            product = access.create_product(data["product_id"], data["name"], data["price"], data["currency"],
                                            data["category"], data["description"])
        except (InvalidInput, ValueError) as error:
            form.add_error(None, str(error))
        except PutError:  # shop.access puts conditionally: the id is taken
            form.add_error("product_id", _("A product with this id exists already."))
        else:
            audit(request, "shop.create_product", product.product_id, after={"price": data["price"],
                  "currency": data["currency"], "category": data["category"]})
            messages.success(request, _("Product %(id)s added.") % {"id": product.product_id})
            return redirect("admin:shop_staff_product", product.product_id)
    return render_shop_staff(request, "form_page.html", _("Add a product"), {"form": form})


@require_http_methods(["GET", "POST"])
def warehouse_add(request: HttpRequest) -> HttpResponse:
    form = WarehouseForm(bound_data(request))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        address = Address(Street=data["street"], Number=data["number"] or None, ZipCode=data["zip_code"],
                          City=data["city"], Country=data["country"])
        try:
            access.create_warehouse(data["warehouse_id"], data["name"], address)
        except PutError:  # shop.access puts conditionally: the id is taken
            form.add_error("warehouse_id", _("A warehouse with this id exists already."))
        else:
            audit(request, "shop.create_warehouse", data["warehouse_id"])
            messages.success(request, _("Warehouse %(id)s added.") % {"id": data["warehouse_id"]})
            return redirect("admin:shop_staff_warehouse", data["warehouse_id"])
    return render_shop_staff(request, "form_page.html", _("Add a warehouse"), {"form": form})


def _adjust(request: HttpRequest, form: StockForm, known: set[tuple[str, str]]) -> bool:
    """Receive or write off stock (or stock a product somewhere for the first time),
    with the reason in the audit trail. True when done."""
    data = form.cleaned_data
    product_id, warehouse_id, change = data["product_id"], data["warehouse_id"], data["change"]
    try:
        if (product_id, warehouse_id) in known:
            access.adjust_stock(product_id, warehouse_id, change)
        elif change > 0 and access.get_product_by_product_id(product_id) and \
                access.get_warehouse_by_warehouse_id(warehouse_id):
            access.put_stock(product_id, warehouse_id, change)
        else:
            form.add_error(None, _("That product is not stocked there: stock it with a positive change "
                                   "(both ids must exist)."))
            return False
    except InvalidInput as error:
        form.add_error("change", str(error))
        return False
    audit(request, STOCK_ADJUSTED, f"{product_id}/{warehouse_id}", after={"change": change}, note=data["reason"])
    messages.success(request, _("Stock of %(product)s in %(warehouse)s changed by %(change)s.") % {
        "product": product_id, "warehouse": warehouse_id, "change": f"{change:+d}"})
    return True


def _stock_page(request: HttpRequest, fixed: str, value: str, stock: list, url_name: str, template: str,
                title: str, context: dict[str, Any]) -> HttpResponse:
    """A product's or a warehouse's page (``fixed`` names the id it is about, ``value``) with
    its ``stock`` and the form that adjusts it; once a posted adjustment is made, the page
    again (``url_name``) by a redirect."""
    data = bound_data(request)
    if data is not None:
        data = {**data.dict(), fixed: value}
    form = StockForm(data, initial={fixed: value}, fixed=fixed)
    if request.method == "POST" and form.is_valid() and \
            _adjust(request, form, {(s.product_id, s.warehouse_id) for s in stock}):
        return redirect(url_name, value)
    return render_shop_staff(request, template, title, {**context, "stock": stock, "form": form})


@require_http_methods(["GET", "POST"])
def product_detail(request: HttpRequest, product_id: str) -> HttpResponse:
    """Patterns 2 and 4: the product and its stock in every warehouse."""
    product = or_404(access.get_product_by_product_id(product_id), "No such product")
    stock = access.get_product_inventory_by_product_id(product_id)
    return _stock_page(request, "product_id", product_id, stock, "admin:shop_staff_product", "product.html",
                       _("Product %(id)s") % {"id": product_id}, {
                           "product": product, "on_hand": sum(s.OnHand for s in stock),
                           "reserved": sum(s.Reserved for s in stock), "available": sum(s.Available for s in stock)})


@require_http_methods(["GET", "POST"])
def warehouse_detail(request: HttpRequest, warehouse_id: str) -> HttpResponse:
    """Patterns 3 and 14: the warehouse and everything stocked in it."""
    warehouse = or_404(access.get_warehouse_by_warehouse_id(warehouse_id), "No such warehouse")
    stock = access.get_product_inventory_by_warehouse_id(warehouse_id)
    return _stock_page(request, "warehouse_id", warehouse_id, stock, "admin:shop_staff_warehouse", "warehouse.html",
                       _("Warehouse %(id)s") % {"id": warehouse_id}, {"warehouse": warehouse})
