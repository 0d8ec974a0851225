"""Reconciliation (DESIGN.md M2): the gateway's charges against the receipts.

Every successful charge must have exactly one receipt and every receipt one charge,
whatever happened between the charge and the receipt (a crash, an outage, a cancel
meanwhile). The gateway lists its charges by date and metadata, as a processor's API
does; each charge's metadata names the account, subscription and period, so its
receipt is one GetItem away (no Scan). Receipts are checked the other way for the
accounts the charges name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from billing import access
from billing.batches.payments import record_paid_charge
from billing.models import Receipt
from core.money import format_with_code
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

# A receipt's BillingDate is the first day its charge pays for, which a retry may
# follow by up to this many days: how far back receipts are read for the reverse check.
RETRY_WINDOW_DAYS = 62


@dataclass
class Difference:
    kind: str  # "missing receipt", "receipt differs", "receipt without charge", "unidentified charge"
    detail: str
    fixed: bool = False

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" + (" (fixed)" if self.fixed else "")


def _describe(charge: ChargeResult) -> str:
    meta = charge.metadata
    return (f"charge {charge.charge_id} {format_with_code(charge.amount, charge.currency)} on {charge.created[:10]}, "
            f"account {meta.get('account_id', '?')} sub {meta.get('sub_id', '?')} "
            f"period {meta.get('period_start', meta.get('billing_date', '?'))}..{meta.get('period_end', '?')}")


def reconcile(date_from: date, date_to: date, *, fix: bool = False, today: date | None = None,
              gateway: PaymentGateway | None = None) -> tuple[int, list[Difference]]:
    """Compare the successful charges created between the two dates with the receipts;
    with ``fix``, record each missing receipt through the batch's own path (receipt,
    event, the subscription paid through the period whatever its state). Returns the
    number of charges checked and the differences found."""
    gateway = gateway or get_gateway()
    charges = [c for c in gateway.list_charges(date_from, date_to) if c.succeeded]
    differences: list[Difference] = []
    accounts: set[str] = set()
    for charge in charges:
        meta = charge.metadata
        if not {"account_id", "sub_id", "sku"} <= set(meta) or not (meta.get("period_start") or meta.get("billing_date")):
            differences.append(Difference("unidentified charge", _describe(charge)))
            continue
        accounts.add(meta["account_id"])
        period = meta.get("period_start") or meta["billing_date"]
        receipt = access.get_receipt(meta["account_id"],
                                     Receipt.sk(billing_date=period, sku=meta["sku"], sub_id=meta["sub_id"]))
        if receipt is not None:
            if receipt.ChargeId != charge.charge_id or receipt.ProcessedAmount != charge.amount:
                differences.append(Difference(
                    "receipt differs", f"{_describe(charge)}; receipt has {receipt.ChargeId} "
                                       f"{format_with_code(receipt.ProcessedAmount, receipt.Currency)}"))
            continue
        difference = Difference("missing receipt", _describe(charge))
        differences.append(difference)
        if fix:
            difference.fixed = _record(charge, today or date_to, difference)
    charged = {c.charge_id for c in charges}
    for account_id in sorted(accounts):
        for receipt in access.get_receipts_by_account(account_id, date_from - timedelta(days=RETRY_WINDOW_DAYS),
                                                      date_to):
            processed = receipt.ProcessedDate[:10]
            if date_from.isoformat() <= processed <= date_to.isoformat() and receipt.ChargeId not in charged:
                differences.append(Difference(
                    "receipt without charge", f"receipt {receipt.SK} of account {account_id}, charge "
                                              f"{receipt.ChargeId} {format_with_code(receipt.ProcessedAmount, receipt.Currency)}"))
    return len(charges), differences


def _record(charge: ChargeResult, today: date, difference: Difference) -> bool:
    meta = charge.metadata
    sub = access.get_subscription(meta["account_id"], meta["sub_id"], meta["sku"])
    if sub is None:
        difference.detail += "; no such subscription: refund it"
        return False
    if "period_end" not in meta:
        difference.detail += "; the charge does not say which days it paid for"
        return False
    record_paid_charge(sub, charge, run_date=today, actor="reconcile")
    return True
