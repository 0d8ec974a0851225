"""The product catalog's staff pages: list, add, edit and retire products (the changes and
their audit events: billing/actions/catalog.py).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import catalog
from billing.models import ProductStatus
from billing.staff.common import add_page, end_page
from billing.staff.forms import ProductForm
from core.money import to_decimal
from core.pages import actor, or_404
from core.staff import render_staff


def products(request: HttpRequest) -> HttpResponse:
    return render_staff(request, "staff/products.html", _("Product catalog"), {
        "products": access.list_products(include_retired=True), "retired": ProductStatus.RETIRED,
    })


@require_http_methods(["GET", "POST"])
def product_add(request: HttpRequest) -> HttpResponse:
    def add(data: dict[str, Any]) -> HttpResponse:
        product = catalog.add_product(data["sku"], data["name"], data["amount"], data["currency"],
                                      data["description"], actor=actor(request), trial_days=data["trial_days"],
                                      add_on=data["add_on"])
        messages.success(request, _("Product %(sku)s added.") % {"sku": product.SKU})
        return redirect("admin:staff_products")

    return add_page(request, ProductForm(request.POST or None), _("Add a product"), "admin:staff_products", add,
                    taken=("sku", _("A product with this SKU already exists.")))


def _product_or_404(sku: str):
    product = or_404(access.get_product(sku), "No such product")
    return product


@require_http_methods(["GET", "POST"])
def product_edit(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    initial = {"sku": product.SKU, "name": product.Name, "description": product.Description or "",
               "price": to_decimal(product.PaymentAmount, product.Currency), "currency": product.Currency,
               "trial_days": product.trial_days, "add_on": product.sold_as_add_on}
    form = ProductForm(request.POST or None, initial=initial, editing=True)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        catalog.edit_product(product, name=data["name"], amount=data["amount"], currency=data["currency"],
                             description=data["description"], actor=actor(request), trial_days=data["trial_days"],
                             add_on=data["add_on"])
        messages.success(request, _("Product %(sku)s saved. Existing subscriptions keep their price.") % {"sku": product.SKU})
        return redirect("admin:staff_products")
    return render_staff(request, "staff/object_form.html", _("Edit %(sku)s") % {"sku": product.SKU},
                        {"back": "admin:staff_products", "form": form, "product": product})


@require_http_methods(["GET", "POST"])
def product_retire(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)

    def retire() -> bool:
        catalog.retire_product(product, actor=actor(request))
        return True

    return end_page(
        request, ended=product.Status == ProductStatus.RETIRED, back="admin:staff_products",
        title=_("Retire %(sku)s") % {"sku": product.SKU},
        question=_("Retire %(name)s (%(sku)s)? It takes no new subscriptions; existing subscriptions go on being "
                   "billed.") % {"name": product.Name, "sku": product.SKU},
        button=_("Retire product"), end=retire, done=_("%(sku)s retired.") % {"sku": product.SKU},
        already=_("%(sku)s is already retired.") % {"sku": product.SKU})
