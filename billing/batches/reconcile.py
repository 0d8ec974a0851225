"""Reconciliation (docs/MONEY.md M2): the gateway's charges against the receipts.

Every successful charge must have exactly one receipt and every receipt one charge,
whatever happened between the charge and the receipt (a crash, an outage, a cancel
meanwhile). The gateway lists its charges by date and metadata, as a processor's API
does; each charge's metadata names the account, subscription and period, so its
receipt is one GetItem away (no Scan). Receipts are checked the other way for the
accounts the charges name (``reverse``: the command does it; the payment run does not).

Fixing (``reconcile_payments --fix``, and every payment run over its own days, Kill Bill's
janitor): a missing receipt is recorded as a processor's webhook records it
(billing/operations/found_charges.py): through the payment path (receipt, audit event, the
receipt e-mail, the subscription paid through the period whatever its state, a cancelled
one included), or, for a charge that bought nothing (a switch not made, a first payment
whose subscription did not start), recorded and refunded in full: never kept. Each step is
conditional or keyed, so two runs reconciling the same days fix each charge once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import date, timedelta

from billing import access
from billing.models import Receipt
from billing.operations.final_usage import receipt_sku
from billing.operations.found_charges import Difference, describe_charge, is_billings, record_missing_receipt
from billing.operations.refunds import record_processor_refund
from billing.rules.invoice_tax import TAX_METADATA
from core.money import format_with_code
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

# A receipt's BillingDate is the first day its charge pays for, which a retry may
# follow by up to this many days: how far back receipts are read for the reverse check.
RETRY_WINDOW_DAYS = 62


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
            differences.append(Difference("unidentified charge", describe_charge(charge)))
            continue
        accounts.add(meta["account_id"])
        if charge.charge_id in recorded:
            continue
        period = meta.get("period_start") or meta["billing_date"]
        receipt = access.get_receipt(meta["account_id"],
                                     Receipt.sk(billing_date=period, sku=receipt_sku(meta), sub_id=meta["sub_id"]))
        if receipt is not None:
            if receipt.ChargeId != charge.charge_id or receipt.ProcessedAmount != charge.amount:
                differences.append(Difference(
                    "receipt differs", f"{describe_charge(charge)}; receipt has {receipt.ChargeId} "
                                       f"{format_with_code(receipt.ProcessedAmount, receipt.Currency)}"))
            elif (why := tax_differs(charge, receipt)):
                differences.append(Difference("receipt tax differs", f"{describe_charge(charge)}; {why}"))
            elif charge.refunded > (receipt.RefundedAmount or 0):
                differences.append(_unrecorded_refunds(charge, receipt, fix=fix, gateway=gateway))
            continue
        difference = Difference("missing receipt", describe_charge(charge))
        differences.append(difference)
        if fix:
            try:
                record_missing_receipt(charge, today or date_to, difference, gateway)
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
    difference = Difference("refund not recorded", f"{describe_charge(charge)}; refunded "
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
