"""Browsing: the catalogue by category and a product's page with its stock summed.

Open to visitors without an account (docs/SHOP.md, "Pages"): nothing here is anyone's
own, and the cart lives in the session, which Django's ``login()`` carries over (it
cycles the key, keeps the data), so log-in is asked only at checkout."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from core.pages import bound_data
from shop import access
from shop.forms import AddToCartForm
from shop.models import ProductStatus
from shop.views.common import availability, categories, get_cart, save_cart, stock_of, too_many

PAGE_SIZE = 24  # products per category page; each costs one stock Query (pattern 4)


@require_GET
def catalogue(request: HttpRequest, category: str | None = None) -> HttpResponse:
    """A category's products with price and availability: one Query of GSI1 ``cat#``,
    then pattern 4 per product shown."""
    known = categories()
    category = category or (known[0] if known else "")
    products = [p for p in access.get_products_by_category(category, limit=PAGE_SIZE)
                if p.Status == ProductStatus.ACTIVE]
    if not products and category not in known:
        raise Http404("No such category")
    rows = []
    for product in products:
        stock = sum(s.Available for s in access.get_product_inventory_by_product_id(product.product_id))
        rows.append({"product": product, "stock": stock, "availability": availability(stock)})
    return render(request, "shop/catalogue.html", {"category": category, "categories": known, "rows": rows})


@require_http_methods(["GET", "POST"])
def product_page(request: HttpRequest, product_id: str) -> HttpResponse:
    """Patterns 2 and 4: the product and its stock over every warehouse, summed."""
    product = access.get_product_by_product_id(product_id)
    if product is None or product.Status != ProductStatus.ACTIVE:
        raise Http404("No such product")
    stock = stock_of(product_id)
    form = AddToCartForm(bound_data(request), initial={"quantity": 1})
    if request.method == "POST" and form.is_valid():
        cart = get_cart(request)
        line = cart.get(product_id, {"quantity": 0})
        quantity = line["quantity"] + form.cleaned_data["quantity"]
        if quantity > stock:
            form.add_error("quantity", too_many(stock))
        elif product_id not in cart and len(cart) >= 20:
            form.add_error(None, _("Your cart holds 20 different products, the most one order can: "
                                   "check out first, or remove one."))
        else:
            cart[product_id] = {"quantity": quantity, "price": int(product.Price), "currency": product.Currency}
            save_cart(request, cart)
            messages.success(request, _("%(product)s is in your cart (%(quantity)s).") % {
                "product": product.Name, "quantity": quantity})
            return redirect("shop:cart")
    return render(request, "shop/product.html", {"product": product, "stock": stock,
                                                 "availability": availability(stock), "form": form})
