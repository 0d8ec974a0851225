"""A credit note: the customer's page (by its number, ``CN-2026-000001``) and its PDF.
A refund issues one against the invoice it corrects; the invoice itself is never edited."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from billing import access
from billing.customers import customer_required
from billing.models import CreditNote
from billing.rules.invoice import credit_note_of
from billing.views.receipt_pdf import credit_note_filename, render_credit_note_pdf
from core.pages import or_404


def _credit_note_or_404(account_id: str, number: str) -> CreditNote:
    return or_404(access.get_credit_note(account_id, number), "no such credit note")


def invoice_url(note: CreditNote) -> str:
    """The page of the invoice a credit note corrects (by its number, else its key)."""
    return reverse("receipt", args=[note.InvoiceNumber or note.ReceiptSK])


@require_safe
@customer_required
def credit_note_detail(request: HttpRequest, account_id: str, number: str) -> HttpResponse:
    note = _credit_note_or_404(account_id, number)
    return render(request, "portal/credit_note.html", {
        "note": note, "doc": credit_note_of(note), "invoice_url": invoice_url(note)})


@require_safe
@customer_required
def credit_note_pdf(request: HttpRequest, account_id: str, number: str) -> HttpResponse:
    note = _credit_note_or_404(account_id, number)
    response = HttpResponse(render_credit_note_pdf(note), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{credit_note_filename(note)}"'
    return response
