"""Reconciliation (docs/MONEY.md M2): the gateway's charges against the receipts.

Every successful charge must have exactly one receipt and every receipt one charge,
whatever happened between the charge and the receipt (a crash, an outage, a cancel
meanwhile). The gateway lists its charges by date and metadata, as a processor's API
does; each charge's metadata names the account, subscription and period, so its
receipt is one GetItem away (no Scan). Receipts are checked the other way for the
accounts the charges name (``reverse``: the command does it; the payment run does not).

Fixing (``reconcile_payments --fix``, and every payment run over its own days, Kill Bill's
janitor): a missing receipt is recorded through the batch's own path (receipt, audit
event, the receipt e-mail, the subscription paid through the period whatever its state,
a cancelled one included); the charge of a first payment whose subscription did not
start (the customer was told it failed, or its confirmation came after it expired) is
recorded and refunded in full under the M5 key ``refund:<ChargeId>:unstarted``, with the refund e-mail: never kept. Each step is
conditional or keyed, so two runs reconciling the same days fix each charge once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings

from billing import access
from billing.batches.expiry import expire
from billing.models import Receipt, Subscription, SubscriptionStatus
from billing.operations.payments import record_paid_charge
from billing.operations.refunds import record_processor_refund, refund_receipt, refund_unapplied_switch
from billing.rules.invoice_tax import TAX_METADATA
from billing.rules.lifecycle import is_expired_incomplete
from core.clock import billing_today
from core.money import format_with_code
from core.payments.errors import PaymentError
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

# A receipt's BillingDate is the first day its charge pays for, which a retry may
# follow by up to this many days: how far back receipts are read for the reverse check.
RETRY_WINDOW_DAYS = 62
# The cancel reason of a subscription whose first charge's outcome was unknown at subscribe.
NOT_STARTED = "first_payment_failed"
UNSTARTED_REFUND = "unstarted"  # the request id of its refund: key refund:<ChargeId>:unstarted


@dataclass
class Difference:
    # "missing receipt", "charge of a subscription that did not start", "receipt differs",
    # "receipt without charge", "unidentified charge"
    kind: str
    detail: str
    fixed: bool = False

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" + (" (fixed)" if self.fixed else "")


def _describe(charge: ChargeResult) -> str:
    meta = charge.metadata
    return (f"charge {charge.charge_id} {format_with_code(charge.amount, charge.currency)} on {charge.created[:10]}, "
            f"account {meta.get('account_id', '?')} sub {meta.get('sub_id', '?')} "
            f"period {meta.get('period_start', meta.get('billing_date', '?'))}..{meta.get('period_end', '?')}")


def today_of(charge: ChargeResult) -> date:
    """The billing day a charge was made on (its invoice's day)."""
    try:
        return billing_today(settings.BILLING_TIMEZONE, datetime.fromisoformat(charge.created))
    except (TypeError, ValueError):
        return billing_today(settings.BILLING_TIMEZONE)


def is_billings(charge: ChargeResult) -> bool:
    """A subscription's charge: the shop's checkout charges name their own source and are
    the shop's to reconcile (``reconcile_checkouts``)."""
    return charge.metadata.get("source", "billing") == "billing"


def reconcile(date_from: date, date_to: date, *, fix: bool = False, today: date | None = None,
              gateway: PaymentGateway | None = None, reverse: bool = True,
              takes: Callable[[str], bool] | None = None,
              recorded: Collection[str] = ()) -> tuple[int, list[Difference]]:
    """Compare the successful charges created between the two dates with the receipts;
    with ``fix``, record each missing receipt (or refund a charge whose subscription did
    not start). ``takes(sub_id)``: only the charges of these subscriptions (a run's
    shards); ``recorded``: charge ids whose receipt the caller has just written or found
    (a payment run's own), not read again. Returns the number of charges checked and the
    differences found.

    Requests: one gateway list, one GetItem per charge (its receipt), and for a missing
    receipt the batch's own writes; with ``reverse``, one Query per account named."""
    gateway = gateway or get_gateway()
    charges = [c for c in gateway.list_charges(date_from, date_to) if c.succeeded and is_billings(c)
               and (takes is None or takes(c.metadata.get("sub_id", "")))]
    differences: list[Difference] = []
    accounts: set[str] = set()
    for charge in charges:
        meta = charge.metadata
        if not {"account_id", "sub_id", "sku"} <= set(meta) or not (meta.get("period_start") or meta.get("billing_date")):
            differences.append(Difference("unidentified charge", _describe(charge)))
            continue
        accounts.add(meta["account_id"])
        if charge.charge_id in recorded:
            continue
        period = meta.get("period_start") or meta["billing_date"]
        receipt = access.get_receipt(meta["account_id"],
                                     Receipt.sk(billing_date=period, sku=meta["sku"], sub_id=meta["sub_id"]))
        if receipt is not None:
            if receipt.ChargeId != charge.charge_id or receipt.ProcessedAmount != charge.amount:
                differences.append(Difference(
                    "receipt differs", f"{_describe(charge)}; receipt has {receipt.ChargeId} "
                                       f"{format_with_code(receipt.ProcessedAmount, receipt.Currency)}"))
            elif (why := tax_differs(charge, receipt)):
                differences.append(Difference("receipt tax differs", f"{_describe(charge)}; {why}"))
            elif charge.refunded > (receipt.RefundedAmount or 0):
                differences.append(_unrecorded_refunds(charge, receipt, fix=fix, gateway=gateway))
            continue
        difference = Difference("missing receipt", _describe(charge))
        differences.append(difference)
        if fix:
            try:
                _record(charge, today or date_to, difference, gateway)
            except Exception as error:  # noqa: BLE001 - left for the next run, said in its line
                difference.detail += f"; not fixed: {type(error).__name__}: {error}".splitlines()[0]
    if reverse:
        differences += _receipts_without_charge(accounts, {c.charge_id for c in charges}, date_from, date_to)
    return len(charges), differences


def tax_differs(charge: ChargeResult, receipt: Receipt) -> str:
    """How the receipt's tax differs from the tax its charge carried (the metadata's
    ``net``, ``tax``, ``tax_rate``, ``tax_country``), or "" (the same, or either one from
    before taxes were kept: nothing to compare)."""
    meta = charge.metadata
    if receipt.Net is None or not set(TAX_METADATA[:4]) <= meta.keys():
        return ""
    charged = (meta["net"], meta["tax"], meta["tax_rate"], meta["tax_country"])
    recorded = (str(receipt.Net), str(receipt.Tax), receipt.TaxRate, receipt.TaxCountry)
    if charged == recorded:
        return ""
    return (f"charged net {charged[0]} tax {charged[1]} at {charged[2]}% ({charged[3]}), receipt has net "
            f"{recorded[0]} tax {recorded[1]} at {recorded[2]}% ({recorded[3]})")


def _receipts_without_charge(accounts: set[str], charged: set[str], date_from: date, date_to: date) -> list[Difference]:
    found = []
    for account_id in sorted(accounts):
        for receipt in access.get_receipts_by_account(account_id, date_from - timedelta(days=RETRY_WINDOW_DAYS),
                                                      date_to):
            processed = receipt.ProcessedDate[:10]
            if not receipt.ChargeId and not receipt.ProcessedAmount:
                continue  # a payment a coupon took whole: recorded paid, nothing to charge by design
            if date_from.isoformat() <= processed <= date_to.isoformat() and receipt.ChargeId not in charged:
                found.append(Difference(
                    "receipt without charge", f"receipt {receipt.SK} of account {account_id}, charge "
                                              f"{receipt.ChargeId} {format_with_code(receipt.ProcessedAmount, receipt.Currency)}"))
    return found


def _unrecorded_refunds(charge: ChargeResult, receipt: Receipt, *, fix: bool, gateway: PaymentGateway) -> Difference:
    """The gateway refunded more of the charge than its receipt says (a refund made at the
    processor, its webhook lost): with ``fix``, each refund the receipt lacks is recorded,
    audited and e-mailed (M5, M6)."""
    difference = Difference("refund not recorded", f"{_describe(charge)}; refunded "
                            f"{format_with_code(charge.refunded, charge.currency)} at the gateway, "
                            f"{format_with_code(receipt.RefundedAmount or 0, receipt.Currency)} on the receipt")
    if not fix:
        return difference
    try:
        known = {r.RefundId for r in receipt.Refunds or []}
        for refund in gateway.refunds_of(charge.charge_id):
            if refund.refund_id not in known:
                record_processor_refund(receipt, refund.refund_id, refund.amount, actor="reconcile")
                receipt = access.get_receipt(receipt.account_id, receipt.SK) or receipt
        difference.fixed = True
    except Exception as error:  # noqa: BLE001 - left for the next run, said in its line
        difference.detail += f"; not fixed: {type(error).__name__}: {error}".splitlines()[0]
    return difference


def record_found_charge(charge: ChargeResult, today: date, *, actor: str,
                        gateway: PaymentGateway | None = None) -> Difference:
    """A charge found without its receipt (by a webhook, say), recorded as the
    reconciliation records it: the receipt, or the full refund of a subscription that did
    not start. The returned difference says what was done (``fixed``)."""
    difference = Difference("missing receipt", _describe(charge))
    _record(charge, today, difference, gateway or get_gateway(), actor=actor)
    return difference


def _record(charge: ChargeResult, today: date, difference: Difference, gateway: PaymentGateway,
            actor: str = "reconcile") -> None:
    meta = charge.metadata
    sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"])
    if sub is None:
        difference.detail += "; no such subscription: refund it"
        return
    if "period_end" not in meta:
        difference.detail += "; the charge does not say which days it paid for"
        return
    if meta.get("kind") == "switch":
        # An upgrade's charge whose switch was never recorded (the page died after the
        # charge, or the subscription changed meanwhile): the customer was not switched,
        # so it is recorded and refunded in full, never kept.
        difference.kind = "charge of a switch not made"
        refunded = refund_unapplied_switch(sub, charge, actor=actor)
        if refunded is None:
            difference.detail += "; refund not made yet"
            return
        difference.detail += f"; refunded {format_with_code(refunded, charge.currency)}" if refunded else ""
        difference.fixed = True
        return
    if is_expired_incomplete(sub):
        # Confirmed with the bank too late (the customer was told it expired): expired
        # now if no run did it yet, and refunded as a subscription that never started.
        expire(sub, actor=actor, gateway=gateway)
        sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"]) or sub
    if _never_started(sub):
        difference.kind = "charge of a subscription that did not start"
        _refund_unstarted(sub, charge, difference, gateway, actor)
        return
    record_paid_charge(sub, charge, run_date=today, actor=actor)
    difference.fixed = True


def _never_started(sub: Subscription) -> bool:
    """Its first payment's outcome was unknown at subscribing, or it expired unconfirmed
    (``incomplete_expired``): the customer was told it did not start."""
    return (sub.Status == SubscriptionStatus.CANCELLED and sub.CancelReason == NOT_STARTED) \
        or sub.Status == SubscriptionStatus.INCOMPLETE_EXPIRED


def _refund_unstarted(sub: Subscription, charge: ChargeResult, difference: Difference,
                      gateway: PaymentGateway, actor: str = "reconcile") -> None:
    """The customer was told the first payment failed, and may have subscribed again: the
    charge is recorded (so M2 holds: one receipt, marked refunded) and refunded in full;
    the refund e-mail is the one message. The subscription stays as it is: it never started."""
    start = date.fromisoformat(charge.metadata["period_start"])
    end = date.fromisoformat(charge.metadata["period_end"])
    receipt, _ = access.create_receipt(
        sub, billing_date=start, amount=charge.amount, currency=charge.currency, charge_id=charge.charge_id,
        retention_days=settings.RECEIPT_RETENTION_DAYS, period_end=end, actor=actor,
        tax=access.invoice_tax(sub, amount=charge.amount, on=today_of(charge), metadata=charge.metadata))
    left = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    if left <= 0:
        difference.fixed = True
        return
    try:
        refund_receipt(receipt, left, request_id=UNSTARTED_REFUND, actor=actor, gateway=gateway,
                       reason="subscription did not start")
    except PaymentError as error:  # audited by refund_receipt; the next run tries the same key again
        difference.detail += f"; refund not made: {error}"
        return
    difference.detail += f"; refunded {format_with_code(left, charge.currency)}"
    difference.fixed = True
