"""The product catalog: list, add, edit and retire products. Catalog changes belong to no
customer: they are audited in the pseudo-account ``CATALOG_EVENTS_ACCOUNT``.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.models import CATALOG_EVENTS_ACCOUNT, AuditAction, ProductStatus
from billing.staff.forms import ProductForm
from core.money import to_decimal
from core.pages import actor
from core.staff import render_staff


def products(request: HttpRequest) -> HttpResponse:
    return render_staff(request, "staff/products.html", _("Product catalog"), {
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
            form.add_error("sku", _("A product with this SKU already exists."))
        else:
            after = {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
                     "Currency": product.Currency, "Status": product.Status}
            _record_catalog_event(request, AuditAction.PRODUCT_CREATED, product.SKU, None, after)
            messages.success(request, _("Product %(sku)s added.") % {"sku": product.SKU})
            return redirect("admin:staff_products")
    return render_staff(request, "staff/product_form.html", _("Add a product"), {"form": form})


def _product_or_404(sku: str):
    product = access.get_product(sku)
    if product is None:
        raise Http404("No such product")
    return product


def _product_snapshot(product) -> dict:
    return {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
            "Currency": product.Currency, "Status": product.Status, "Description": product.Description}


def _record_catalog_event(request: HttpRequest, action: AuditAction, sku: str, before: dict | None,
                          after: dict | None) -> None:
    access.record_event(CATALOG_EVENTS_ACCOUNT, actor=actor(request), action=action, subject=f"SKU#{sku}",
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
        _record_catalog_event(request, AuditAction.PRODUCT_UPDATED, product.SKU, before, _product_snapshot(updated))
        messages.success(request, _("Product %(sku)s saved. Existing subscriptions keep their price.") % {"sku": product.SKU})
        return redirect("admin:staff_products")
    return render_staff(request, "staff/product_form.html", _("Edit %(sku)s") % {"sku": product.SKU}, {"form": form, "product": product})


@require_http_methods(["GET", "POST"])
def product_retire(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    if product.Status == ProductStatus.RETIRED:
        messages.info(request, _("%(sku)s is already retired.") % {"sku": product.SKU})
        return redirect("admin:staff_products")
    if request.method == "GET":
        return render_staff(request, "staff/confirm.html", _("Retire %(sku)s") % {"sku": product.SKU}, {
            "question": _("Retire %(name)s (%(sku)s)? It takes no new subscriptions; existing subscriptions go "
                          "on being billed.") % {"name": product.Name, "sku": product.SKU},
            "button": _("Retire product"), "danger": True, "back": reverse("admin:staff_products"),
        })
    before = _product_snapshot(product)
    retired = access.retire_product(product.SKU)
    _record_catalog_event(request, AuditAction.PRODUCT_RETIRED, product.SKU, before, _product_snapshot(retired))
    messages.success(request, _("%(sku)s retired.") % {"sku": product.SKU})
    return redirect("admin:staff_products")
