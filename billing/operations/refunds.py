"""Refunding a charge: the gateway gives the money back, the receipt records it, the
customer is told (money rules M5 and M6).

Each refund request has its own idempotency key, ``refund:<ChargeId>:<RequestId>``: the
request id is fixed when staff open the refund form, so a double click or a retried
request refunds once, while a second refund of the same charge (another request) is a
refund of its own. The gateway refuses more than what is left of the charge.

Who refunds: staff and the API (a refund of their choosing), the actions that give money
back (cancel now, a switch's excess credit), the processor's webhooks and the
reconciliation (a refund made in the processor's dashboard, recorded), and the charges
that bought nothing, refunded whole wherever they are found: a payment that landed after
its account was closed (``refund_after_close``, from the payment path) and an upgrade's
charge whose switch was not made (``refund_unapplied_switch``, from the switch and the
reconciliation).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import AuditAction, CreditNote, Receipt, Subscription
from billing.notify import credit_note_context
from billing.operations.retention import retained_until, retention_years
from billing.rules.schedule import cadence_of, charges_paying_from
from billing.rules.seat_lines import charge_seats
from billing.rules.switch import receipts_from, unused_credit
from core.mail import money_text, send_customer_email
from core.payments.errors import GatewayError, PaymentError, RefundRefused
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

log = logging.getLogger(__name__)

UNDONE = "switch-undone"  # the request id of an unapplied switch's refund: refund:<ChargeId>:switch-undone


@dataclass
class RefundDone:
    receipt: Receipt
    refund_id: str
    amount: int
    mail_error: str = ""


def refund_key(receipt: Receipt, request_id: str) -> str:
    return f"refund:{receipt.ChargeId}:{request_id}"


def refund_receipt(receipt: Receipt, amount: int, *, request_id: str, actor: str, reason: str = "",
                   gateway: PaymentGateway | None = None, expected_refunded: int | None = None,
                   action: AuditAction = AuditAction.STAFF_REFUND, line: int | None = None) -> RefundDone:
    """Refund ``amount`` minor units of the receipt's charge.

    ``expected_refunded``: the refunded amount the staff form showed. Given, the receipt
    is first claimed for this request on that condition (``access.claim_refund``), and
    ``RefundedMeanwhile`` is raised, before the gateway is asked, when another refund was
    made (or is being made) since the form was opened. ``action``: the audit event's.
    ``line``: the one invoice line the refund credits (``access.refundable_lines``), at
    most what it still holds; refused before the gateway is asked otherwise.

    Raises ``RefundRefused`` when the gateway refuses it and ``GatewayError`` when the
    gateway cannot be reached (nothing is known to have moved: the same request may be
    tried again, and keeps its claim until then); both leave an audit event. Nothing is
    raised for a mail failure.
    """
    if not receipt.ChargeId:
        raise RefundRefused("this receipt has no charge to refund")
    if line is not None:
        _check_line(receipt, line, amount)
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
                                          reason=reason or None, claim=claim, request_id=request_id,
                                          action=action, line=line)
    if not added:  # a repeated request: the refund and its e-mail were made the first time
        return RefundDone(receipt, result.refund_id, result.amount)
    return RefundDone(receipt, result.refund_id, result.amount, tell_refund(receipt, result.refund_id, result.amount))


def _check_line(receipt: Receipt, line: int, amount: int) -> None:
    """A refund of one line: of a line the invoice has, at most what it still holds."""
    held = access.line_left(receipt, line)
    if held is None:
        raise RefundRefused(f"this receipt has no line {line} to refund alone")
    if amount > held:
        raise RefundRefused(f"at most {held} (minor units) is left of line {line}")


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


# --- charges that bought nothing: refunded whole ------------------------------------------


def refund_after_close(receipt: Receipt, sub: Subscription) -> str:
    """A payment run's charge that succeeded after the account was closed (it was in flight
    at the gateway during the close): refunded whole, under the cancel-now refund key (a
    repeat refunds once), and its receipt kept to the tax retention date like the others
    (billing/actions/data_rights.py)."""
    access.keep_receipt_until(receipt, retained_until(receipt, retention_years()))
    left = receipt.net_amount
    if left > 0 and receipt.ChargeId:
        refund_receipt(receipt, left, request_id=f"cancel-{sub.sub_id}", actor="batch",
                       reason="charged after the account was closed")
    return "refunded: the account was closed"


def refund_unapplied_switch(sub: Subscription, charge: ChargeResult, *, actor: str) -> int | None:
    """A switch's charge whose switch was not recorded: its receipt (so every charge has
    one, M2) and a full refund under ``refund:<ChargeId>:switch-undone``, with the refund
    e-mail. Returns the amount refunded now (0: refunded already; None: the refund failed,
    and the next reconciliation tries the same key again)."""
    start = date.fromisoformat(charge.metadata["period_start"])
    end = date.fromisoformat(charge.metadata.get("period_end", charge.metadata["period_start"]))
    kind = "seats" if charge.metadata.get("kind") == "seats" else "switch"  # more seats' charge: the same path
    receipt, _ = access.create_receipt(
        sub, billing_date=start, amount=charge.amount, currency=charge.currency, charge_id=charge.charge_id,
        retention_days=settings.RECEIPT_RETENTION_DAYS, period_end=end, actor=actor,
        sku=charge.metadata.get("sku"), kind=kind, seats=charge_seats(charge.metadata),
        tax=access.invoice_tax(sub, amount=charge.amount, on=start, metadata=charge.metadata))
    receipt = access.get_receipt(sub.account_id, receipt.SK) or receipt
    left = receipt.net_amount
    if left <= 0:
        return 0
    try:
        refund_receipt(receipt, left, request_id=UNDONE, actor=actor, reason="switch of product not made" if kind == "switch" else "change of seats not made")
    except PaymentError as error:  # audited by refund_receipt
        log.warning("the unapplied switch %s of %s is not refunded yet: %s", charge.charge_id, sub.sub_id, error)
        return None
    return left


# --- days paid and no longer bought: their unused share given back ---------------------------


def refund_unused_days(sub: Subscription, owed: int, *, today: date, actor: str, request_id: str,
                       reason: str) -> int:
    """Refund ``owed`` of what paid ``sub``'s days from ``today`` on: from the receipts
    that paid them, newest first, each at most its unused share less what was refunded of
    it (``rules.switch.unused_credit``), under ``refund:<ChargeId>:<request_id>`` (a repeat
    refunds once; M5). A switch's credit above the new price and fewer seats both come
    here. Returns what was refunded; a refund the gateway refuses is audited by
    ``refund_receipt`` and left to staff."""
    # As far back as the quote that promised ``owed`` read (a yearly period is paid by a
    # charge older than the monthly window): else a yearly plan's credit found no receipt.
    back = receipts_from(sub, today, charges_paying_from(cadence_of(sub), today))
    receipts = access.get_receipts_by_account(sub.account_id, back, today)
    refunded = 0
    for receipt in sorted((r for r in receipts if r.sub_id == sub.sub_id and r.ChargeId),
                          key=lambda r: (r.PeriodStart or r.BillingDate, r.ProcessedDate or ""), reverse=True):
        amount = min(owed - refunded, unused_credit(receipt, today))
        if amount <= 0:
            continue
        try:
            refunded += refund_receipt(receipt, amount, request_id=request_id, actor=actor, reason=reason).amount
        except PaymentError as error:
            log.warning("%s: the unused days' refund on %s is not made: %s", sub.sub_id, receipt.SK, error)
        if refunded >= owed:
            break
    return refunded
