"""A product's prices on the staff pages (docs/PRICING.md): every product with its prices
(the catalog, finance and admin roles see them), and a price added or archived by the
finance and admin roles (billing/actions/prices.py: each with its audit event)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import prices as price_actions
from billing.models import Price, PriceStatus, Product
from billing.rules.price_objects import price_words_of
from billing.staff.price_forms import PriceForm, tax_behavior_words
from core.pages import actor, or_404
from core.staff import INTEGRATIONS, MONEY, has_any_perm, render_staff

# Who adds and archives a price: what customers are charged is money (finance), and the
# admin role's; the catalog role sees them beside its products.
CHANGE_PRICES = (MONEY, INTEGRATIONS)


def _row(price: Price) -> dict:
    return {"price": price, "words": price_words_of(price),
            "tax": tax_behavior_words(price.TaxBehavior),
            "archived": price.Status == PriceStatus.ARCHIVED, "default": price.PriceId.startswith("price_default_")}


def _prices_url(sku: str) -> str:
    return reverse("admin:staff_prices") + f"#prices-{sku}"


def prices(request: HttpRequest) -> HttpResponse:
    """Every product (retired ones too) with its prices, archived ones included: one Query
    of the products, then one of each product's prices (a catalogue is tens of products)."""
    products: list[Product] = access.list_products(include_retired=True)
    rows = [(product, [_row(p) for p in access.list_prices(product.SKU, include_archived=True, product=product)])
            for product in products]
    return render_staff(request, "staff/prices.html", _("Prices"), {
        "rows": rows, "can_change": has_any_perm(request.user, CHANGE_PRICES)})


@require_http_methods(["GET", "POST"])
def price_add(request: HttpRequest, sku: str) -> HttpResponse:
    product = or_404(access.get_product(sku), "No such product")
    form = PriceForm(request.POST or None, initial={"currency": product.Currency})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            price = price_actions.add_price(
                product.SKU, data["terms"], actor=actor(request), nickname=data["nickname"],
                unit_label=data["unit_label"], trial_days=data["trial_days"], min_quantity=data["min_quantity"],
                max_quantity=data["max_quantity"], meter=data["meter"], tax_behavior=data["tax_behavior"])
        except access.NoSuchProduct:
            messages.error(request, _("That product is gone: nothing was added."))
            return redirect("admin:staff_prices")
        messages.success(request, _("Price %(id)s added to %(sku)s.") % {"id": price.PriceId, "sku": product.SKU})
        return redirect(_prices_url(product.SKU))
    return render_staff(request, "staff/price_form.html", _("Add a price to %(sku)s") % {"sku": product.SKU},
                        {"form": form, "product": product, "back": _prices_url(product.SKU)})


@require_http_methods(["GET", "POST"])
def price_archive(request: HttpRequest, price_id: str) -> HttpResponse:
    price = or_404(access.get_price(price_id), "No such price")
    back = _prices_url(price.SKU)
    if price.PriceId.startswith("price_default_"):
        messages.info(request, _("A product's default price follows the product: retire the product instead."))
        return redirect(back)
    if price.Status == PriceStatus.ARCHIVED:
        messages.info(request, _("%(id)s is archived already.") % {"id": price.PriceId})
        return redirect(back)
    if request.method == "GET":
        return render_staff(request, "staff/confirm.html", _("Archive %(id)s") % {"id": price.PriceId}, {
            "question": _("Archive %(words)s (%(id)s)? New subscriptions no longer take it; its amounts stay as "
                          "they were.") % {"words": price_words_of(price), "id": price.PriceId},
            "button": _("Archive price"), "danger": True, "back": back})
    try:
        price_actions.archive_price(price, actor=actor(request))
        messages.success(request, _("%(id)s archived.") % {"id": price.PriceId})
    except access.ConditionFailed:
        messages.info(request, _("%(id)s is archived already.") % {"id": price.PriceId})
    return redirect(back)
