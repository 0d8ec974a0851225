"""The cart, kept in the session: lines of product id and quantity, with the price seen
when added (checkout re-reads the prices and says when one changed). A visitor has a
cart before logging in: the session, not the account, holds it, and log-in or sign-up
keeps it (checkout is where the log-in is asked)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from shop import access
from shop.forms import CartLineForm
from shop.models import ProductStatus
from shop.views.common import get_cart, save_cart, stock_of, too_many


def priced_lines(cart: dict) -> tuple[list[dict], dict[str, int]]:
    """The cart's lines at today's prices (one BatchGetItem) and the totals per currency;
    a product no longer sold is listed with ``gone``."""
    products = access.get_products_by_ids(list(cart))
    lines, totals = [], {}
    for product_id, line in cart.items():
        product = products.get(product_id)
        gone = product is None or product.Status != ProductStatus.ACTIVE
        price = int(product.Price) if product else line.get("price", 0)
        currency = product.Currency if product else line.get("currency", "")
        row = {"product_id": product_id, "name": product.Name if product else product_id, "quantity": line["quantity"],
               "price": price, "currency": currency, "total": price * line["quantity"], "gone": gone,
               "was": line.get("price") if line.get("price") not in (None, price) else None}
        lines.append(row)
        if not gone:
            totals[currency] = totals.get(currency, 0) + row["total"]
    return lines, totals


@require_GET
def cart_page(request: HttpRequest) -> HttpResponse:
    lines, totals = priced_lines(get_cart(request))
    return render(request, "shop/cart.html", {"lines": lines, "totals": sorted(totals.items())})


@require_POST
def cart_update(request: HttpRequest) -> HttpResponse:
    """Change a line's quantity; 0 (or the Remove button) takes it out."""
    data = request.POST.copy()
    if "remove" in data:
        data["quantity"] = "0"
    form = CartLineForm(data)
    if not form.is_valid():
        messages.error(request, _("That change could not be made:") + " " + " ".join(
            str(e) for errors in form.errors.values() for e in errors))
        return redirect("shop:cart")
    cart = get_cart(request)
    product_id, quantity = form.cleaned_data["product"], form.cleaned_data["quantity"]
    if product_id in cart:
        if quantity > cart[product_id]["quantity"] and quantity > (stock := stock_of(product_id)):
            # As the product page refuses it: more than the warehouses hold cannot be ordered.
            messages.error(request, too_many(stock))
            return redirect("shop:cart")
        if quantity:
            cart[product_id]["quantity"] = quantity
            messages.success(request, _("Quantity changed."))
        else:
            del cart[product_id]
            messages.success(request, _("Removed from your cart."))
        save_cart(request, cart)
    return redirect("shop:cart")
