"""Refunding a charge: the gateway gives the money back, the receipt records it, the
customer is told (money rules M5 and M6).

Each refund request has its own idempotency key, ``refund:<ChargeId>:<RequestId>``: the
request id is fixed when staff open the refund form, so a double click or a retried
request refunds once, while a second refund of the same charge (another request) is a
refund of its own. The gateway refuses more than what is left of the charge.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import AuditAction, CreditNote, Receipt
from billing.notify import credit_note_context
from core.mail import money_text, send_customer_email
from core.payments.errors import GatewayError, RefundRefused
from core.payments.gateway import PaymentGateway, get_gateway


@dataclass
class RefundDone:
    receipt: Receipt
    refund_id: str
    amount: int
    mail_error: str = ""


def refund_key(receipt: Receipt, request_id: str) -> str:
    return f"refund:{receipt.ChargeId}:{request_id}"


def refund_receipt(receipt: Receipt, amount: int, *, request_id: str, actor: str, reason: str = "",
                   gateway: PaymentGateway | None = None, expected_refunded: int | None = None) -> RefundDone:
    """Refund ``amount`` minor units of the receipt's charge.

    ``expected_refunded``: the refunded amount the staff form showed. Given, the receipt
    is first claimed for this request on that condition (``access.claim_refund``), and
    ``RefundedMeanwhile`` is raised, before the gateway is asked, when another refund was
    made (or is being made) since the form was opened.

    Raises ``RefundRefused`` when the gateway refuses it and ``GatewayError`` when the
    gateway cannot be reached (nothing is known to have moved: the same request may be
    tried again, and keeps its claim until then); both leave an audit event. Nothing is
    raised for a mail failure.
    """
    if not receipt.ChargeId:
        raise RefundRefused("this receipt has no charge to refund")
    claim = None
    if expected_refunded is not None:
        receipt = access.claim_refund(receipt, expected_refunded=expected_refunded, request_id=request_id)
        claim = request_id
    before = access.receipt_snapshot(receipt)
    try:
        result = (gateway or get_gateway()).refund(
            receipt.ChargeId, amount, idempotency_key=refund_key(receipt, request_id),
            reason=reason or "staff refund")
    except GatewayError as error:
        _record_failure(receipt, actor, before, f"gateway unreachable: {error}")
        raise
    if result.status != "succeeded":
        if claim:
            access.release_refund_claim(receipt, claim)  # refused: nothing moved
        _record_failure(receipt, actor, before, result.reason or result.status)
        raise RefundRefused(result.reason or result.status)
    receipt, added = access.record_refund(receipt, refund_id=result.refund_id, amount=result.amount, actor=actor,
                                          reason=reason or None, claim=claim, request_id=request_id)
    if not added:  # a repeated request: the refund and its e-mail were made the first time
        return RefundDone(receipt, result.refund_id, result.amount)
    return RefundDone(receipt, result.refund_id, result.amount, tell_refund(receipt, result.refund_id, result.amount))


def record_processor_refund(receipt: Receipt, refund_id: str, amount: int, *, actor: str) -> bool:
    """A refund made at the processor (Stripe's dashboard), recorded on its receipt (M5),
    audited (M6) and e-mailed, once; False when it was recorded already."""
    receipt, added = access.record_refund(receipt, refund_id=refund_id, amount=amount, actor=actor,
                                          reason="refunded at the payment processor")
    if added:
        tell_refund(receipt, refund_id, amount)
    return added


def tell_refund(receipt: Receipt, refund_id: str, amount: int) -> str:
    """The refund e-mail, in the customer's language (the receipt's copy), not the staff's;
    for an invoice it carries the credit note the refund issued (one e-mail: the refund
    and its document). Returns the mail error, if any."""
    subject = format_lazy(_("Refund: {product}"), product=receipt.ProductName or receipt.SKU)
    note = credit_note_of_refund(receipt, refund_id)
    return send_customer_email("refund", receipt.Email or "", subject, language=receipt.Language, context={
        "product": receipt.ProductName or receipt.SKU,
        "amount": money_text(amount, receipt.Currency),
        "billing_date": receipt.BillingDate,
        "refund_id": refund_id,
        "refunded_total": money_text(receipt.RefundedAmount or 0, receipt.Currency),
        "charged": money_text(receipt.ProcessedAmount, receipt.Currency),
        **(credit_note_context(note) if note is not None else {}),
    })


def credit_note_of_refund(receipt: Receipt, refund_id: str) -> CreditNote | None:
    """The credit note a refund of an invoice issued (in the refund's own write): one
    Query, only for an invoice (a tax-blind receipt has none)."""
    if not receipt.is_invoice:
        return None
    return next((n for n in access.credit_notes_of_receipt(receipt) if n.RefundId == refund_id), None)


def _record_failure(receipt: Receipt, actor: str, before: dict, why: str) -> None:
    access.record_event(receipt.account_id, actor=actor, action=AuditAction.STAFF_REFUND_FAILED,
                        subject=receipt.SK, before=before, after=before, note=why[:500])
