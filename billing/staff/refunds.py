"""Refunding a receipt through the gateway (needs the money permission): several partial
refunds up to what was charged, each recorded on the receipt, audited and e-mailed
(billing.operations.refunds does the work; this page asks and reports).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.models import Receipt
from billing.operations.refunds import refund_receipt
from billing.staff.common import CHANGED_MESSAGE, account_url, back_to_account, confirm_page
from billing.staff.forms import RefundForm
from billing.templatetags.staff_pages import staff_date
from core.money import format_with_code, to_decimal
from core.pages import actor, or_404
from core.payments.errors import GatewayError, RefundRefused


def _shown_refunded(request: HttpRequest) -> int | None:
    """The refunded amount the posted form showed (None when it is not a number)."""
    try:
        return int(request.POST.get("refunded", ""))
    except ValueError:
        return None


@require_http_methods(["GET", "POST"])
def staff_refund(request: HttpRequest, account_id: str, receipt_sk: str) -> HttpResponse:
    receipt = or_404(access.get_receipt(account_id, receipt_sk), "No such receipt")
    if request.method == "POST":
        shown = _shown_refunded(request)
        same_request = access.refund_of_request(receipt, request.POST.get("request_id", ""))
        if shown is not None and shown != (receipt.RefundedAmount or 0) and not same_request:
            return _changed_meanwhile(request, account_id, receipt)
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    if refundable <= 0 or not receipt.ChargeId:
        return back_to_account(request, account_id,
                               _("This receipt has been refunded in full (or has no charge to refund)."))
    form = _refund_form(receipt, request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            done = refund_receipt(receipt, data["amount"], request_id=data["request_id"], actor=actor(request),
                                  reason=data["reason"], expected_refunded=data["refunded"], line=data.get("line"))
        except access.RefundedMeanwhile as meanwhile:
            return _changed_meanwhile(request, account_id, meanwhile.receipt, in_progress=meanwhile.in_progress)
        except GatewayError:
            # The same form (its request id, its claim on the receipt) may be sent again:
            # the gateway's idempotency key makes a retry safe.
            form.add_error(None, _("The payment provider could not be reached; nothing was refunded. "
                                   "Try again shortly."))
            return _refund_page(request, account_id, receipt, form)
        except RefundRefused as refused:
            return back_to_account(request, account_id,
                                   _("The gateway refused the refund: %(reason)s.") % {"reason": refused.reason})
        except (access.ConditionFailed, ValueError):
            # The money went back but the receipt could not be updated: keep the trail honest.
            return back_to_account(request, account_id, _("Refunded at the gateway, but the receipt could not be "
                                                          "updated; run reconcile_payments or check it."))
        left = done.receipt.ProcessedAmount - (done.receipt.RefundedAmount or 0)
        messages.success(request, _("Refunded %(amount)s (%(refund)s); %(left)s left refundable.") % {
            "amount": format_with_code(done.amount, receipt.Currency), "refund": done.refund_id,
            "left": format_with_code(left, receipt.Currency)})
        return redirect(account_url(account_id))
    return _refund_page(request, account_id, receipt, form)


def _refund_form(receipt: Receipt, data=None) -> RefundForm:
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    return RefundForm(data, currency=receipt.Currency, refundable=refundable, lines=access.refundable_lines(receipt),
                      initial={"amount": to_decimal(refundable, receipt.Currency), "request_id": access.new_id(),
                               "refunded": receipt.RefundedAmount or 0})


def _refund_page(request: HttpRequest, account_id: str, receipt: Receipt, form: RefundForm | None,
                 status: int = 200) -> HttpResponse:
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    if form is None:
        question = _("This receipt has been refunded in full (or has no charge to refund).")
    else:
        question = _("Refund up to %(amount)s of the payment of %(date)s to the customer's card?") % {
            "amount": format_with_code(refundable, receipt.Currency), "date": staff_date(receipt.BillingDate)}
    response = confirm_page(request, account_id, _("Refund a payment"), question, receipt=receipt, form=form,
                            button=_("Refund") if form is not None else None, danger=True,
                            can_confirm=form is not None)
    response.status_code = status
    return response


def _changed_meanwhile(request: HttpRequest, account_id: str, receipt: Receipt, *,
                       in_progress: bool = False) -> HttpResponse:
    """The refund form was drawn from a receipt that was refunded since (another tab,
    another staff member): nothing is refunded; the receipt is shown as it is now, with a
    new form for what is left, if anything."""
    messages.warning(request, CHANGED_MESSAGE + " " + (
        _("Another refund of this payment is being made right now.") if in_progress
        else _("It was refunded meanwhile: %(refunded)s refunded so far. Nothing more was refunded.")
        % {"refunded": format_with_code(receipt.RefundedAmount or 0, receipt.Currency)}))
    left = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    form = _refund_form(receipt) if left > 0 and receipt.ChargeId and not in_progress else None
    return _refund_page(request, account_id, receipt, form, status=409)
