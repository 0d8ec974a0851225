"""Staff: pick lists (pattern 13), an order (pattern 5) with create shipments, mark
shipped, cancel and refund; orders per product (pattern 9) and a customer's invoices
(pattern 15) in a date range. Each change is audited and e-mailed to the customer."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from core.pages import actor, or_404, today
from shop import access
from shop.errors import PaymentPending, ShopError
from shop.forms import DateRangeForm, ShipForm
from shop.fulfilment import cancel_order, create_shipments, mark_shipped, refund_order
from shop.ids import is_valid_id
from shop.models import OrderStatus, ShipmentStatus
from shop.staff.common import audit, order_or_404, render_shop_staff
from shop.views.common import shipment_rows
from shop.views.emails import send_refund, send_shipped


@require_GET
def pick_list(request: HttpRequest, warehouse_id: str) -> HttpResponse:
    """Pattern 13: the warehouse's shipments, newest first."""
    warehouse = or_404(access.get_warehouse_by_warehouse_id(warehouse_id), "No such warehouse")
    shipments = list(reversed(access.get_shipment_by_warehouse_id(warehouse_id)))
    return render_shop_staff(request, "pick_list.html", _("Pick list of %(warehouse)s") % {"warehouse": warehouse_id},
                             {"warehouse": warehouse, "shipments": shipments})


@require_GET
def order_detail(request: HttpRequest, order_id: str) -> HttpResponse:
    details = order_or_404(order_id)
    order = details.order
    shipped = any(s.Status == ShipmentStatus.SHIPPED for s in details.shipments)
    shipped_lines = {(i.ProductId, i.WarehouseId) for i in details.shipment_items}
    open_lines = any((i.ProductId, p.WarehouseId) not in shipped_lines for i in details.items for p in i.Picks)
    return render_shop_staff(request, "order.html", _("Order %(id)s") % {"id": order_id}, {
        "d": details, "order": order, "shipments": shipment_rows(details),
        "can_ship": order.Status in (OrderStatus.PAID, OrderStatus.PARTIALLY_SHIPPED) and open_lines,
        "can_cancel": order.Status == OrderStatus.PAID and not shipped,
        "can_refund": order.Status in (OrderStatus.SHIPPED, OrderStatus.PARTIALLY_SHIPPED),
    })


@require_POST
def order_create_shipments(request: HttpRequest, order_id: str) -> HttpResponse:
    order_or_404(order_id)
    try:
        made = create_shipments(order_id)
    except ShopError as error:
        messages.error(request, str(error))
    else:
        audit(request, "shop.create_shipments", order_id, after={"shipments": [s.shipment_id for s in made]})
        messages.success(request, ngettext("%(count)d shipment to pick.", "%(count)d shipments to pick.", len(made))
                         % {"count": len(made)})
    return redirect("admin:shop_staff_order", order_id)


@require_POST
def shipment_ship(request: HttpRequest, shipment_id: str) -> HttpResponse:
    found = or_404(access.get_shipment_details_by_shipment_id(shipment_id), "No such shipment")
    order_id = found.shipment.OrderId
    form = ShipForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("A carrier and a tracking number (up to 100 characters each) are needed."))
        return redirect("admin:shop_staff_order", order_id)
    try:
        shipment = mark_shipped(shipment_id, form.cleaned_data["carrier"], form.cleaned_data["tracking_number"])
    except ShopError as error:
        messages.error(request, str(error))
        return redirect("admin:shop_staff_order", order_id)
    audit(request, "shop.mark_shipped", order_id, after={"shipment": shipment_id, "carrier": shipment.Carrier,
                                                         "tracking": shipment.TrackingNumber})
    send_shipped(order_or_404(order_id).order, shipment)
    messages.success(request, _("Shipment %(shipment)s shipped with %(carrier)s (%(tracking)s).") % {
        "shipment": shipment_id, "carrier": shipment.Carrier, "tracking": shipment.TrackingNumber})
    return redirect("admin:shop_staff_order", order_id)


@require_POST
def order_close(request: HttpRequest, order_id: str, kind: str) -> HttpResponse:
    """Cancel (nothing shipped) or refund (goods back): restock, gift card back, card refunded."""
    if kind not in ("cancel", "refund"):
        raise Http404("No such action")
    order_or_404(order_id)  # the money permission is checked in shop_staff_urls
    try:
        order = (cancel_order if kind == "cancel" else refund_order)(order_id, actor=actor(request))
    except PaymentPending:
        audit(request, f"shop.{kind}_order", order_id, note="card refund pending: reconcile finishes it")
        messages.warning(request, _("The order is closed and its stock and gift card are back; the payment "
                                    "provider did not answer about the card refund, which the reconcile command "
                                    "retries."))
        return redirect("admin:shop_staff_order", order_id)
    except ShopError as error:
        messages.error(request, str(error))
        return redirect("admin:shop_staff_order", order_id)
    audit(request, f"shop.{kind}_order", order_id)
    send_refund(order, kind)
    done = (_("Order %(id)s cancelled: stock and money are back.") if kind == "cancel"
            else _("Order %(id)s refunded: stock and money are back."))
    messages.success(request, done % {"id": order_id})
    return redirect("admin:shop_staff_order", order_id)


@require_GET
def product_orders(request: HttpRequest, product_id: str) -> HttpResponse:
    """Pattern 9: the product's order lines in a date range."""
    product = or_404(access.get_product_by_product_id(product_id), "No such product")
    form = DateRangeForm.for_request(request.GET, today(), days=30)
    rows = []
    if form.is_valid():
        for item in access.get_order_by_product_id_for_date_range(product_id, form.cleaned_data["first"],
                                                                  form.cleaned_data["last"]):
            rows.append({"when": item.GSI1SK, "order_id": item.OrderId, "what": f"{item.Quantity} × {item.Name}",
                         "amount": item.Price * item.Quantity, "currency": item.Currency})
    return render_shop_staff(request, "report.html", _("Orders of %(product)s") % {"product": product.Name}, {
        "form": form, "rows": rows, "headers": [_("Placed"), _("Order"), _("Line"), _("Amount")]})


@require_GET
def customer_invoices(request: HttpRequest, customer_id: str) -> HttpResponse:
    """Pattern 15: a customer's invoices in a date range (a customer with none shows none:
    a customer id is an account id, which the billing pages check)."""
    if not is_valid_id(customer_id):
        raise Http404("No such customer")
    form = DateRangeForm.for_request(request.GET, today(), days=365)
    rows = []
    if form.is_valid():
        for invoice in access.get_invoice_by_customer_id_for_date_range(customer_id, form.cleaned_data["first"],
                                                                        form.cleaned_data["last"]):
            rows.append({"when": invoice.IssuedAt, "order_id": invoice.OrderId, "what": invoice.invoice_id,
                         "amount": invoice.Amount, "currency": invoice.Currency})
    return render_shop_staff(request, "report.html", _("Invoices of customer %(customer)s") % {"customer": customer_id}, {
        "form": form, "rows": rows, "headers": [_("Issued"), _("Order"), _("Invoice"), _("Amount")]})
