"""The product catalogue: list, add, edit and retire products. Catalogue changes are
audited under a fixed pseudo-account, as they belong to no customer.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from billing import access
from billing.models import ProductStatus
from billing.money import to_decimal
from billing.staff_forms import ProductForm

from ._common import _actor, _render


def products(request: HttpRequest) -> HttpResponse:
    return _render(request, "staff/products.html", "Product catalogue", {
        "products": access.list_products(include_retired=True), "retired": ProductStatus.RETIRED,
    })


@require_http_methods(["GET", "POST"])
def product_add(request: HttpRequest) -> HttpResponse:
    form = ProductForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            product = access.create_product(data["sku"], data["name"], data["amount"], data["currency"],
                                            data["description"])
        except access.AlreadyExists:
            form.add_error("sku", "A product with this SKU already exists.")
        else:
            after = {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
                     "Currency": product.Currency, "Status": product.Status}
            _record_catalogue_event(request, "staff.create_product", product.SKU, None, after)
            messages.success(request, f"Product {product.SKU} added.")
            return redirect("admin:staff_products")
    return _render(request, "staff/product_form.html", "Add a product", {"form": form})


def _product_or_404(sku: str):
    product = access.get_product(sku)
    if product is None:
        raise Http404("No such product")
    return product


def _product_snapshot(product) -> dict:
    return {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
            "Currency": product.Currency, "Status": product.Status, "Description": product.Description}


CATALOGUE_ACCOUNT = "CATALOG"


def _record_catalogue_event(request: HttpRequest, action: str, sku: str, before: dict | None,
                            after: dict | None) -> None:
    # Audit events live in an account's partition; catalogue changes belong to no account,
    # so they are filed under a fixed pseudo-account id.
    access.record_event(CATALOGUE_ACCOUNT, actor=_actor(request), action=action, subject=f"SKU#{sku}",
                        before=before, after=after)


@require_http_methods(["GET", "POST"])
def product_edit(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    initial = {"sku": product.SKU, "name": product.Name, "description": product.Description or "",
               "price": to_decimal(product.PaymentAmount, product.Currency), "currency": product.Currency}
    form = ProductForm(request.POST or None, initial=initial, editing=True)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        before = _product_snapshot(product)
        updated = access.update_product(product.SKU, name=data["name"], amount=data["amount"],
                                        currency=data["currency"], description=data["description"])
        _record_catalogue_event(request, "staff.update_product", product.SKU, before, _product_snapshot(updated))
        messages.success(request, f"Product {product.SKU} saved. Existing subscriptions keep their price.")
        return redirect("admin:staff_products")
    return _render(request, "staff/product_form.html", f"Edit {product.SKU}", {"form": form, "product": product})


@require_http_methods(["GET", "POST"])
def product_retire(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    if product.Status == ProductStatus.RETIRED:
        messages.info(request, f"{product.SKU} is already retired.")
        return redirect("admin:staff_products")
    if request.method == "GET":
        return _render(request, "staff/confirm.html", f"Retire {product.SKU}", {
            "question": f"Retire {product.Name} ({product.SKU})? It takes no new subscriptions; "
                        "existing subscriptions go on being billed.",
            "button": "Retire product", "danger": True, "back": reverse("admin:staff_products"),
        })
    before = _product_snapshot(product)
    retired = access.retire_product(product.SKU)
    _record_catalogue_event(request, "staff.retire_product", product.SKU, before, _product_snapshot(retired))
    messages.success(request, f"{product.SKU} retired.")
    return redirect("admin:staff_products")
