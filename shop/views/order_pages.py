"""A customer's orders: the list (order history), one order (pattern 5: lines, invoice,
payments, shipments and tracking in one Query), invoices and purchases in a date range
(patterns 15 and 16), and a gift card's balance."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods

from billing.customers import InvoiceTaxFigures, customer_required, seller_now
from core.pages import bound_data, today
from shop import access
from shop.access.orders import OrderDetails
from shop.forms import DateRangeForm, GiftCardBalanceForm
from shop.views.common import order_or_404, shipment_rows

GIFT_CARD_MISSES_ALLOWED = 10  # per account and hour
GIFT_CARD_MISSES_WINDOW = 3600


@require_GET
@customer_required
def orders_page(request: HttpRequest, account_id: str) -> HttpResponse:
    return render(request, "shop/orders.html", {"orders": access.get_orders_by_customer_id(account_id)})


@require_GET
@customer_required
def order_page(request: HttpRequest, account_id: str, order_id: str) -> HttpResponse:
    details = order_or_404(account_id, order_id)
    return render(request, "shop/order.html", {"d": details, "order": details.order,
                                               "shipments": shipment_rows(details), "seller": seller_of(details)})


def seller_of(details: OrderDetails) -> InvoiceTaxFigures | None:
    """The seller the invoice names: its own snapshot, else (an invoice written before
    invoices kept it) today's."""
    invoice = details.invoice
    if invoice is None:
        return None
    if invoice.SellerName is None:
        return seller_now()
    return InvoiceTaxFigures(invoice.SellerName, invoice.SellerAddress or "", invoice.SellerCountry or "",
                             invoice.SellerVatNumber or "", int(invoice.Net or 0), int(invoice.Tax or 0),
                             invoice.TaxRate or "", invoice.TaxTreatment or "", invoice.BuyerCountry or "",
                             invoice.BuyerVatNumber)


@require_GET
@customer_required
def history_page(request: HttpRequest, account_id: str) -> HttpResponse:
    """Invoices (pattern 15) and products bought (pattern 16) in a date range."""
    form = DateRangeForm.for_request(request.GET, today())
    invoices, purchases = [], []
    if form.is_valid():
        first, last = form.cleaned_data["first"], form.cleaned_data["last"]
        invoices = access.get_invoice_by_customer_id_for_date_range(account_id, first, last)
        purchases = access.get_products_by_customer_id_for_date_range(account_id, first, last)
    return render(request, "shop/history.html", {"form": form, "invoices": invoices, "purchases": purchases})


@sensitive_post_parameters("code")
@require_http_methods(["GET", "POST"])
@customer_required
def gift_card_page(request: HttpRequest, account_id: str) -> HttpResponse:
    """A gift card's balance and its ledger (one Query: the card and its newest
    movements). POST, so the code stays out of URLs and logs."""
    form = GiftCardBalanceForm(bound_data(request))
    ledger, looked = None, False
    misses_key = f"shop:gift-card-misses:{account_id}"
    if request.method == "POST" and form.is_valid():
        if cache.get(misses_key, 0) >= GIFT_CARD_MISSES_ALLOWED:
            # A code is a bearer secret: no trying codes one after another.
            form.add_error("code", _("Too many codes that did not match: try again in an hour."))
        else:
            looked = True
            ledger = access.get_gift_card_with_ledger(form.cleaned_data["code"])
            if ledger is None:
                cache.add(misses_key, 0, timeout=GIFT_CARD_MISSES_WINDOW)
                cache.incr(misses_key)
    return render(request, "shop/gift_card.html", {
        "form": form, "card": ledger.card if ledger else None, "ledger": ledger, "looked": looked,
        "rows": ledger.rows() if ledger else []})
