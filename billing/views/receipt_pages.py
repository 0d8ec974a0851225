"""Receipts: the last six months grouped by month with the failed attempts beside them,
one receipt (by its number), its PDF, and the CSV export (which carries no card details
at all).
"""

from __future__ import annotations

import csv
from collections import OrderedDict, defaultdict
from datetime import date
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from billing import access
from billing.customers import customer_required
from billing.models import Receipt
from billing.rules.invoice import invoice_of
from billing.rules.schedule import months_before
from billing.views.common import RECEIPT_MONTHS
from billing.views.receipt_pdf import pdf_filename, render_receipt_pdf
from core.money import decimal_string
from core.pages import or_404, today


def _receipt_window() -> tuple[date, date]:
    end = today()
    return months_before(end, RECEIPT_MONTHS), end


def group_by_month(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Newest month first, each with its receipts and a total per currency (net of refunds)."""
    months: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for receipt in receipts:
        key = receipt.BillingDate[:7]
        month = months.setdefault(key, {"month": date.fromisoformat(key + "-01"), "receipts": [],
                                        "totals": defaultdict(int)})
        month["receipts"].append(receipt)
        month["totals"][receipt.Currency] += int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0)
    for month in months.values():
        month["totals"] = sorted(month["totals"].items())
    return list(months.values())


@require_safe
@customer_required
def receipts(request: HttpRequest, account_id: str) -> HttpResponse:
    start, end = _receipt_window()
    listed, history = _with_periods_in_force(account_id, start, end)
    return render(request, "portal/receipts.html", {
        "months": group_by_month(listed), "failed": history.failed, "start": start, "end": end,
        "in_force": len(listed) > len(history.receipts)})


def _with_periods_in_force(account_id: str, start: date, end: date) -> tuple[list[Receipt], access.PaymentHistory]:
    """The window's receipts (and its declines, and the subscriptions: one Query) and the
    receipt of each period still in force that began before it (a yearly's: read by key,
    a BatchGetItem only when there is one)."""
    history = access.get_payment_history(account_id, start, end)
    return access.with_receipts_in_force(history.receipts, history.subscriptions, start, end), history


def _receipt_or_404(account_id: str, receipt_id: str) -> Receipt:
    return or_404(access.get_receipt_for_url(account_id, receipt_id), "no such receipt")


@require_safe
@customer_required
def receipt_detail(request: HttpRequest, account_id: str, receipt_id: str) -> HttpResponse:
    receipt = _receipt_or_404(account_id, receipt_id)
    if receipt.Number and receipt_id != receipt.Number:
        return redirect("receipt", receipt.Number, permanent=True)  # an old link by key
    return render(request, "portal/receipt.html", {
        "receipt": receipt, "net": receipt.net_amount, "seller": settings.RPAY_SELLER, "invoice": invoice_of(receipt)})



@require_safe
@customer_required
def receipt_pdf(request: HttpRequest, account_id: str, receipt_id: str) -> HttpResponse:
    receipt = _receipt_or_404(account_id, receipt_id)
    response = HttpResponse(render_receipt_pdf(receipt, settings.RPAY_SELLER), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{pdf_filename(receipt)}"'
    return response


# OWASP "CSV injection": a cell a spreadsheet would run as a formula gets a leading quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> str:
    text = str(cell)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


CSV_COLUMNS = ["number", "billing_date", "processed_date", "product", "sku", "subscription", "amount", "currency",
               "status", "refunded_amount", "charge_id"]


@require_safe
@customer_required
def receipts_csv(request: HttpRequest, account_id: str) -> HttpResponse:
    start, end = _receipt_window()
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="rpay-receipts-{start}-to-{end}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    # No card details at all in the export: it is a file that gets e-mailed around.
    for r in _with_periods_in_force(account_id, start, end)[0]:
        writer.writerow([spreadsheet_safe(cell) for cell in (
            r.Number or "", r.BillingDate, r.ProcessedDate, r.ProductName or "", r.SKU, r.sub_id,
            decimal_string(r.ProcessedAmount, r.Currency), r.Currency, r.Status,
            decimal_string(r.RefundedAmount or 0, r.Currency), r.ChargeId or "",
        )])
    return response
