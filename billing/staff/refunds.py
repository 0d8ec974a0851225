"""Refunding a receipt through the gateway (needs the money permission): several partial
refunds up to what was charged, each recorded on the receipt, audited and e-mailed
(billing.actions.refunds does the work; this page asks and reports).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions.refunds import refund_receipt
from billing.staff.common import account_url, confirm_page, staff_date
from billing.staff.forms import RefundForm
from core.money import format_with_code, to_decimal
from core.pages import actor, or_404
from core.payments.errors import GatewayError, RefundRefused


@require_http_methods(["GET", "POST"])
def staff_refund(request: HttpRequest, account_id: str, receipt_sk: str) -> HttpResponse:
    receipt = or_404(access.get_receipt(account_id, receipt_sk), "No such receipt")
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    if refundable <= 0 or not receipt.ChargeId:
        messages.error(request, _("This receipt has been refunded in full (or has no charge to refund)."))
        return redirect(account_url(account_id))
    form = RefundForm(request.POST or None, currency=receipt.Currency, refundable=refundable,
                      initial={"amount": to_decimal(refundable, receipt.Currency), "request_id": access.new_id()})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            done = refund_receipt(receipt, data["amount"], request_id=data["request_id"], actor=actor(request),
                                  reason=data["reason"])
        except GatewayError:
            messages.error(request, _("The payment provider could not be reached; nothing was refunded. "
                                      "Try again shortly."))
            return redirect(account_url(account_id))
        except RefundRefused as refused:
            messages.error(request, _("The gateway refused the refund: %(reason)s.") % {"reason": refused.reason})
            return redirect(account_url(account_id))
        except (access.ConditionFailed, ValueError):
            # The money went back but the receipt could not be updated: keep the trail honest.
            messages.error(request, _("Refunded at the gateway, but the receipt could not be updated; "
                                      "run reconcile_payments or check it."))
            return redirect(account_url(account_id))
        left = done.receipt.ProcessedAmount - (done.receipt.RefundedAmount or 0)
        messages.success(request, _("Refunded %(amount)s (%(refund)s); %(left)s left refundable.") % {
            "amount": format_with_code(done.amount, receipt.Currency), "refund": done.refund_id,
            "left": format_with_code(left, receipt.Currency)})
        return redirect(account_url(account_id))
    return confirm_page(request, account_id, _("Refund a payment"),
                        _("Refund up to %(amount)s of the payment of %(date)s to the customer's card?") % {
                            "amount": format_with_code(refundable, receipt.Currency),
                            "date": staff_date(receipt.BillingDate)},
                        receipt=receipt, form=form, button=_("Refund"), danger=True)
