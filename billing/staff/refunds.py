"""Refunding a receipt through the gateway (needs the money permission), recorded on the
receipt with a condition and in the audit trail whatever happens.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from billing import access
from billing.gateway import get_gateway
from billing.models import AuditAction, ReceiptStatus
from billing.money import format_with_code, to_decimal
from billing.pages import actor

from .common import account_url, confirm_page, require_money_permission
from .forms import RefundForm


@require_http_methods(["GET", "POST"])
def staff_refund(request: HttpRequest, account_id: str, receipt_sk: str) -> HttpResponse:
    require_money_permission(request)
    receipt = access.get_receipt(account_id, receipt_sk)
    if receipt is None:
        raise Http404("No such receipt")
    # One refund per receipt: the idempotency key is the receipt's key, so a second
    # call would only return the first refund's result.
    if receipt.Status != ReceiptStatus.PAID or not receipt.ChargeId:
        messages.error(request, "This receipt has already been refunded (or has no charge to refund).")
        return redirect(account_url(account_id))
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    form = RefundForm(request.POST or None, currency=receipt.Currency, refundable=refundable,
                      initial={"amount": to_decimal(refundable, receipt.Currency)})
    if request.method == "POST" and form.is_valid():
        amount = form.cleaned_data["amount"]
        before = access.receipt_snapshot(receipt)
        result = get_gateway().refund(
            receipt.ChargeId, amount, idempotency_key=f"refund:{receipt.SK}",
            reason=form.cleaned_data["reason"] or "staff refund")
        if result.status != "succeeded":
            access.record_event(account_id, actor=actor(request), action=AuditAction.STAFF_REFUND_FAILED,
                                subject=receipt.SK, before=before, after=before,
                                note=result.reason or result.status)
            messages.error(request, f"The gateway refused the refund: {result.reason or result.status}.")
            return redirect(account_url(account_id))
        try:
            access.record_refund(receipt, refund_id=result.refund_id, amount=result.amount)
        except (access.ConditionFailed, ValueError):
            # The money went back but our record moved meanwhile: keep the trail honest.
            access.record_event(account_id, actor=actor(request), action=AuditAction.STAFF_REFUND_UNRECORDED,
                                subject=receipt.SK, before=before, note=result.refund_id)
            messages.error(request, f"Refunded ({result.refund_id}) but the receipt changed meanwhile; check it.")
            return redirect(account_url(account_id))
        access.record_event(account_id, actor=actor(request), action=AuditAction.STAFF_REFUND, subject=receipt.SK,
                            before=before, after=access.receipt_snapshot(receipt),
                            note=form.cleaned_data["reason"] or None)
        messages.success(request, f"Refunded {format_with_code(result.amount, receipt.Currency)} ({result.refund_id}).")
        return redirect(account_url(account_id))
    return confirm_page(request, account_id, "Refund a payment",
                    f"Refund up to {format_with_code(refundable, receipt.Currency)} of the payment of "
                    f"{receipt.BillingDate} to the customer's card?", receipt=receipt, form=form,
                    button="Refund", danger=True)
