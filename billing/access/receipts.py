"""Receipts: written once per paid period (the key is deterministic, so a retry finds the
first), read by the customer until their TTL passes, and refunded by staff.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from pynamodb.exceptions import DoesNotExist, TransactWriteError

from billing.access._common import (
    absent_if_invalid,
    is_expired,
    iso_now,
    refused_as,
    transact_with_retries,
    utc_now,
)
from billing.access.catalog import get_product
from billing.access.credit_notes import (
    CREDIT_NOTE_NUMBERS,
    add_credit_note,
    is_tax_invoice,
    line_left,
    new_credit_note,
    refunds_so_far,
)
from billing.access.events import new_event
from billing.access.outbox import new_merchant_event, receipt_events, save_item
from billing.access.receipt_numbers import RECEIPT_NUMBERS, ReceiptNumbers, is_receipt_number, write_numbered
from billing.access.tax_ledger import (
    InvoiceTax,
    add_receipt_totals,
    invoice_tax,
    write_invoice_tax,
)
from billing.exceptions import ConditionFailed, ReceiptNumberTaken, RefundedMeanwhile
from billing.models import (
    AuditAction,
    AuditEvent,
    CreditNote,
    MerchantEvent,
    MerchantEventType,
    Receipt,
    ReceiptNumberLookup,
    ReceiptStatus,
    Refund,
    Subscription,
    TaxLineMap,
    UsageMap,
)
from billing.rules.add_ons import billed_on, plan_amount, split_fee
from billing.rules.api_objects import refund_object
from billing.rules.projection import MeteredUsage
from billing.rules.receipt_keys import product_sku
from billing.rules.seat_lines import LineSeats, mark_seats
from billing.rules.switch import usage_only
from billing.rules.tax import tax_line
from billing.rules.usage_lines import parts_of, plain_part, split_usages
from billing.rules.usage_metadata import usage_records
from core.clock import billing_today


def receipt_ttl(billing_date: date, retention_days: int, period_end: date | None = None) -> datetime:
    """``retention_days`` after the billing date, and never before the last day of the
    period it pays for: a yearly charge's receipt stays while its days may still be
    refunded (a cancel now reads it; from its last day on nothing of it is unused)."""
    kept = max(billing_date + timedelta(days=retention_days), period_end or billing_date)
    return datetime(kept.year, kept.month, kept.day, tzinfo=UTC)


def create_receipt(sub: Subscription, *, numbers: ReceiptNumbers | None = None, **charge: Any,
                   ) -> tuple[Receipt, bool]:
    """Record a successful charge: its receipt number (the move of its series' counter,
    billing/access/receipt_numbers.py), the receipt, only if absent, its number's look-up
    item, only if absent, its ``payment.succeeded`` audit event, and the merchant's
    ``payment.succeeded`` and ``invoice.created`` events (billing/access/outbox.py), in one
    TransactWriteItems (one request, so a batch payment stays at two: this and the
    advance). The key is deterministic (billing date, SKU, SubId), so a retried payment
    finds the first receipt and writes no second event, and takes no number: returns
    (receipt, created). ``numbers``: the series to draw from (a payment run's, else the
    process's). ``charge``: the charge as ``build_receipt`` takes it (its one list of
    arguments). The tax is added to the quarter's totals by the same transaction (retried
    when it meets another on a totals item).
    """
    processed_at = charge.pop("processed_at", None) or utc_now()
    # Worked out once: the items are built again for each number drawn.
    tax = charge.pop("tax", None) or invoice_tax(sub, amount=charge["amount"], on=billing_today(
        settings.BILLING_TIMEZONE, processed_at))
    built: list[Receipt] = []

    def write(transaction: Any, number: str) -> None:
        receipt, lookup, event = build_receipt(sub, number=number, processed_at=processed_at, tax=tax, **charge)
        built[:] = [receipt]
        # The puts go first (the counter is an update): the receipt is reason 0, the look-up 2.
        transaction.save(receipt, condition=Receipt.SK.does_not_exist())
        transaction.save(event)
        transaction.save(lookup, condition=ReceiptNumberLookup.SK.does_not_exist())
        add_receipt_totals(transaction, receipt)  # after the three: the reasons' indexes above
        for merchant_event in receipt_events(receipt):
            save_item(transaction, merchant_event)

    try:
        write_numbered(numbers or RECEIPT_NUMBERS, processed_at.year, write, numbered=(2,))
    except TransactWriteError as error:
        reasons = error.cancellation_reasons or []
        refused = [r is not None and r.code == "ConditionalCheckFailed" for r in reasons]
        if refused and refused[0]:
            receipt = built[0]
            receipt.Number = None  # the stored receipt has its own number; this one was never taken
            return receipt, False
        if len(refused) > 2 and refused[2]:
            raise ReceiptNumberTaken(built[0].Number) from error
        raise
    return built[0], True


def build_receipt(
    sub: Subscription,
    *,
    billing_date: date,
    amount: int,
    currency: str,
    charge_id: str | None,
    retention_days: int,
    processed_at: datetime | None = None,
    period_end: date | None = None,
    actor: str = "batch",
    number: str,
    sku: str | None = None,
    discount: int | None = None,
    coupon: str | None = None,
    tax: InvoiceTax,
    product_name: str | None = None,
    kind: str | None = None,
    usage: dict[str, str] | None = None,
    priced: tuple[MeteredUsage, ...] = (),
    seats: LineSeats | None = None,
) -> tuple[Receipt, ReceiptNumberLookup, AuditEvent]:
    """The receipt (numbered, an invoice with its tax), its number's look-up item and its
    ``payment.succeeded`` event, not yet written: ``create_receipt`` writes them, and a
    switch of product writes them with the subscription's own update
    (billing/access/switch.py), each with the tax totals' adds (``add_receipt_totals``).

    ``billing_date`` is the first day paid for, ``period_end`` the last. ``number``: the
    one the writing transaction takes (``receipt_numbers.write_numbered``). ``sku``: the product charged (the charge's
    own, should the subscription have switched since); ``product_name``: its name (default:
    the one the subscription knows it by, see ``_name_charged``). ``discount`` and
    ``coupon``: a coupon's discount on this charge (the period's price was ``amount +
    discount``); a charge of 0 (all taken off) has no ``charge_id``. ``tax``: the invoice's
    tax (billing/access/tax_ledger.py), worked out by the caller once for every number it
    may draw. ``kind``:
    ``switch`` for an upgrade's charge (billing/rules/switch.py), None for a period's.
    ``usage``: the usage the charge billed in arrears, as its metadata carries it
    (billing/rules/usage_metadata.py: ``usage_start``, ``usage_end``, then each metered
    price's ``price``, ``meter``, ``quantity`` and ``amount``); ``priced``: that usage as
    the charge priced it, with its parts (each price's tiers: ``metered.priced_usage``),
    so each usage is one invoice line a tier (without it, or for another quantity: one
    usage line each). ``seats``: the several seats the
    fixed fee pays for (a switch's charge: billing/rules/seat_lines.py), on its line; None
    for one."""
    sku = sku or sub.SKU
    processed_at = processed_at or utc_now()
    receipt = Receipt(
        sub.PK,
        Receipt.sk(billing_date=billing_date.isoformat(), sku=sku, sub_id=sub.sub_id),
        sub_id=sub.sub_id,
        SKU=sku,
        ProductName=product_name or _name_charged(sub, sku),
        Email=sub.Email,
        BillingDate=billing_date.isoformat(),
        PeriodStart=billing_date.isoformat(),
        PeriodEnd=period_end.isoformat() if period_end else None,
        ProcessedDate=processed_at.isoformat(timespec="seconds"),
        ProcessedAmount=amount,
        Currency=currency,
        ChargeId=charge_id,
        CardBrand=sub.PaymentDetails.Brand if sub.PaymentDetails else None,
        CardLast4=sub.PaymentDetails.Last4 if sub.PaymentDetails else None,
        BillingAddress=(sub.PaymentDetails.BillingAddress or None) if sub.PaymentDetails else None,
        Language=sub.Language,
        TTL=receipt_ttl(billing_date, retention_days, period_end),
        Number=number,
        DiscountAmount=discount if coupon else None,
        CouponCode=coupon,
        Kind=kind,
        **_usage_attributes(usage),
    )

    write_invoice_tax(receipt, tax)
    mark_seats(receipt.TaxLines[0], seats)
    usage_net = None
    alone = kind == "usage" or usage_only(sub)
    if usage:
        # usage alone (no fixed fee) is itemised as a cancellation's charge of the usage only
        usage_lines = _itemise_usage(receipt, tax, alone=alone, priced=priced)
        # the usage lines' net: the revenue figures read it from this event, not the receipt
        usage_net = sum(int(line.Net) for line in usage_lines)
    if kind is None and not alone:
        _itemise_add_ons(receipt, sub, billing_date, prices_include_tax=bool(tax.prices_include_tax))
    lookup = ReceiptNumberLookup(ReceiptNumberLookup.pk(number=number), ReceiptNumberLookup.sk(number=number),
                                 AccountId=sub.account_id, ReceiptSK=receipt.SK, TTL=receipt.TTL)
    event = new_event(
        sub.account_id, actor=actor, action=AuditAction.PAYMENT_SUCCEEDED, subject=sub.SK,
        after={"Receipt": receipt.SK, "Number": number, "Amount": amount, "Currency": currency, "ChargeId": charge_id,
               "PeriodStart": receipt.PeriodStart, "PeriodEnd": receipt.PeriodEnd,
               **({"Coupon": coupon, "Discount": discount} if coupon else {}),
               **({"UsageNet": usage_net} if usage_net is not None else {})},
    )
    return receipt, lookup, event


def _itemise_add_ons(receipt: Receipt, sub: Subscription, billing_date: date, *, prices_include_tax: bool) -> None:
    """The fixed fee's line (the first) as one line an item when the payment bills add-ons
    (billing/rules/add_ons.py): the plan's, keeping its words and seats, then each
    add-on's, named by its product; the fee and its tax shared by their prices."""
    add_ons = billed_on(sub, billing_date)
    if not add_ons:  # (the fee's line is there: ``write_invoice_tax`` wrote it)
        return
    fee, *rest = receipt.TaxLines
    split = split_fee(plan_amount(sub), [add_on.amount for add_on in add_ons], net=int(fee.Net), tax=int(fee.Tax),
                      gross=int(fee.Gross), prices_include_tax=prices_include_tax)
    (net, tax, gross), *parts = split
    fee.Net, fee.Tax, fee.Gross = net, tax, gross
    receipt.TaxLines = [fee, *(TaxLineMap(Description=add_on.name, PeriodStart=fee.PeriodStart, PeriodEnd=fee.PeriodEnd,
                                          Net=part[0], TaxRate=fee.TaxRate, Tax=part[1], Gross=part[2])
                               for add_on, part in zip(add_ons, parts, strict=True)), *rest]


def _itemise_usage(receipt: Receipt, invoiced: InvoiceTax, *, alone: bool,
                   priced: tuple[MeteredUsage, ...] = ()) -> list[TaxLineMap]:
    """The invoice's one line as the fixed fee's and the usage's: the fixed fee taxed alone
    as the upcoming payment itemises it (billing/operations/charge_lines.py), the usage the
    rest; one rate, the same totals. ``alone``: a charge of the usage only (a
    cancellation's, billing/operations/final_usage.py, or a subscription to usage alone's):
    every line is the usage's. Each metered price's usage is one line a tier of its price
    (``priced``'s parts, shared out by billing/rules/usage_lines.py: they sum to the one
    usage line exactly), else one line each. Returns the usage's lines."""
    recorded = receipt_usages(receipt)
    whole, usage_amount = invoiced.line, sum(amount for _, _, _, amount in recorded)
    last_day = (date.fromisoformat(receipt.UsageEnd) - timedelta(days=1)).isoformat() if receipt.UsageEnd else None
    [first] = receipt.TaxLines or []
    if alone:
        net, tax, gross = int(first.Net), int(first.Tax), int(first.Gross)
        fixed_lines = []
    else:
        # The fixed fee's price: the gross less the usage (tax-inclusive), else the net less it.
        fixed_price = (whole.gross if invoiced.prices_include_tax else whole.net) - usage_amount
        fixed = tax_line(fixed_price, whole.rate, prices_include_tax=invoiced.prices_include_tax)
        net, tax, gross = whole.net - fixed.net, whole.tax - fixed.tax, whole.gross - fixed.gross
        fixed_lines = [TaxLineMap(Description=first.Description, PeriodStart=first.PeriodStart,
                                  PeriodEnd=first.PeriodEnd, Net=fixed.net, TaxRate=first.TaxRate, Tax=fixed.tax,
                                  Gross=fixed.gross, Quantity=first.Quantity, SeatPrice=first.SeatPrice)]
    days = {"PeriodStart": receipt.UsageStart, "PeriodEnd": last_day, "TaxRate": first.TaxRate}
    include = bool(invoiced.prices_include_tax)
    # As charged: the same prices, quantities and amounts as the receipt records.
    as_charged = [(u.price_id, u.meter, u.quantity, u.amount) for u in priced] == recorded
    split = split_usages([parts_of(u) for u in priced], net=net, tax=tax, gross=gross,
                         prices_include_tax=include) if as_charged else None
    if split:
        # a line a tier of each price (a price that entered no tier: its one plain line)
        usage_lines = [TaxLineMap(Description=usage.meter, **days, Net=line.net, Tax=line.tax, Gross=line.gross,
                                  UsageUnits=line.part.units, UnitAmount=str(line.part.unit_amount),
                                  FlatAmount=line.part.flat_amount, PackageSize=line.part.package_size,
                                  UnitLabel=usage.unit_label) if usage.parts else
                       TaxLineMap(Description=f"{usage.meter} × {usage.quantity}", **days, Net=line.net, Tax=line.tax,
                                  Gross=line.gross)
                       for usage, lines in zip(priced, split, strict=True) for line in lines]
    else:
        # One line a metered price: its amount, its share of the usage's tax.
        each = split_usages([plain_part(quantity, amount) for _, _, quantity, amount in recorded], net=net, tax=tax,
                            gross=gross, prices_include_tax=include)
        if each is None:  # the amounts recorded are not the usage's line: one line of all
            usage_lines = [TaxLineMap(Description=", ".join(f"{meter} × {quantity}" for _, meter, quantity, _ in recorded),
                                      **days, Net=net, Tax=tax, Gross=gross)]
        else:
            usage_lines = [TaxLineMap(Description=f"{meter} × {quantity}", **days, Net=line.net, Tax=line.tax,
                                      Gross=line.gross) for (_, meter, quantity, _), [line] in zip(recorded, each, strict=True)]
    receipt.TaxLines = fixed_lines + usage_lines
    return usage_lines


def receipt_usages(receipt: Receipt) -> list[tuple[str, str, int, int]]:
    """The usage a receipt records, each metered price's (price, meter, quantity, amount
    before tax), the first first; [] for none."""
    if receipt.UsagePriceId is None:
        return []
    first = (receipt.UsagePriceId, str(receipt.UsageMeter), int(receipt.UsageQuantity or 0),
             int(receipt.UsageAmount or 0))
    return [first, *((u.PriceId, u.Meter, int(u.Quantity), int(u.Amount)) for u in receipt.OtherUsage or [])]


def _usage_attributes(usage: dict[str, str] | None) -> dict[str, Any]:
    records = usage_records(usage or {})
    if not records:
        return {}
    first, *others = records
    return {"UsagePriceId": first["price"], "UsageMeter": first["meter"],
            "UsageStart": usage["usage_start"], "UsageEnd": usage["usage_end"],  # type: ignore[index]
            "UsageQuantity": int(first["quantity"]), "UsageAmount": int(first["amount"]),
            **({"OtherUsage": [UsageMap(PriceId=u["price"], Meter=u["meter"], Quantity=int(u["quantity"]),
                                        Amount=int(u["amount"])) for u in others]} if others else {})}


def _name_charged(sub: Subscription, sku: str) -> str | None:
    """The name of the product a charge paid for: the subscription's, unless it switched
    product between its charge and the charge's record (a run that died before the
    receipt, then the customer's switch): then the product switched from, as the
    subscription remembers it or as the catalog names it (one GetItem, only then). A change
    of seats' or a switch's charge names the product's SKU marked (``TEAM~seats3``:
    billing/rules/receipt_keys.py): the product is the part before the mark."""
    sku = product_sku(sku)
    if sku == sub.SKU:
        return sub.ProductName
    if sku == sub.PreviousSKU:
        return sub.PreviousProductName
    product = get_product(sku)
    return product.Name if product else sku


@absent_if_invalid(list)
def get_receipts_by_account(
    account_id: str, start: date, end: date, *, now: datetime | None = None
) -> list[Receipt]:
    """Query base table, ``SK between REC#<start> and REC#<end>~``, newest first,
    without receipts whose TTL has passed."""
    now = now or utc_now()
    prefix = Receipt.sk_template.prefix
    receipts = Receipt.query(
        Receipt.pk(account_id=account_id),
        Receipt.SK.between(f"{prefix}{start.isoformat()}", f"{prefix}{end.isoformat()}~"),
        filter_condition=Receipt.TTL.does_not_exist() | (now < Receipt.TTL),
        scan_index_forward=False,
    )
    return [r for r in receipts if not is_expired(r, now)]


@absent_if_invalid()
def get_receipt(account_id: str, receipt_sk: str) -> Receipt | None:
    Receipt.sk_template.parse(receipt_sk)  # InvalidKey for anything not a receipt key
    try:
        return Receipt.get(Receipt.pk(account_id=account_id), receipt_sk)
    except DoesNotExist:
        return None


def get_unexpired_receipt(account_id: str, receipt_sk: str, *, now: datetime | None = None) -> Receipt | None:
    """``get_receipt`` without receipts whose TTL has passed (DynamoDB deletes them lazily,
    and the customer must not see a receipt the list no longer shows): one GetItem."""
    receipt = get_receipt(account_id, receipt_sk)
    if receipt is None or is_expired(receipt, now or utc_now()):
        return None
    return receipt


@absent_if_invalid()
def get_receipt_by_number(account_id: str, number: str, *, now: datetime | None = None) -> Receipt | None:
    """The account's receipt numbered ``number``, unexpired: two GetItems (the number's
    look-up item, then the receipt). None for anything not shaped like a number (checked
    before a key is built), an unknown number, or another account's receipt."""
    if not is_receipt_number(number):
        return None
    try:
        lookup = ReceiptNumberLookup.get(ReceiptNumberLookup.pk(number=number), ReceiptNumberLookup.sk(number=number))
    except DoesNotExist:
        return None
    if lookup.AccountId != account_id:
        return None
    receipt = get_unexpired_receipt(account_id, lookup.ReceiptSK, now=now)
    return receipt if receipt is not None and receipt.Number == number else None


def get_receipt_for_url(account_id: str, url_id: str, *, now: datetime | None = None) -> Receipt | None:
    """The receipt a portal URL names: by number (``R-2026-000123``), or by key for a
    receipt written before numbers existed (``Receipt.url_id``)."""
    if url_id.startswith(Receipt.sk_template.prefix):
        return get_unexpired_receipt(account_id, url_id, now=now)
    return get_receipt_by_number(account_id, url_id, now=now)


# A claim older than this is a request that died between the claim and the gateway's
# answer: another may take it over (the gateway's idempotency key still guards the first).
REFUND_CLAIM_LIFETIME = timedelta(minutes=10)


def claim_refund(receipt: Receipt, *, expected_refunded: int, request_id: str,
                 now: datetime | None = None) -> Receipt:
    """Claim the receipt for one staff refund, before the gateway is asked: one
    conditional UpdateItem that holds only while ``RefundedAmount`` is what the refund
    form showed and no other request's claim is alive. Two tabs opened on the same
    receipt thus make one refund: the second is refused with ``RefundedMeanwhile`` (the
    receipt as it is now), not refunded again. The same request (a double click, a retry
    after an unreachable gateway) may claim again. ``record_refund(..., claim=...)``
    releases the claim with the refund's own write; ``release_refund_claim`` when the
    gateway refused."""
    now = now or utc_now()
    unchanged = Receipt.RefundedAmount == expected_refunded
    if not expected_refunded:
        unchanged = unchanged | Receipt.RefundedAmount.does_not_exist()
    free = (Receipt.RefundClaim.does_not_exist() | (Receipt.RefundClaim == request_id)
            | (Receipt.RefundClaimAt < (now - REFUND_CLAIM_LIFETIME).isoformat(timespec="seconds")))
    try:
        with refused_as(ConditionFailed, receipt.SK):
            receipt.update(actions=[Receipt.RefundClaim.set(request_id),
                                    Receipt.RefundClaimAt.set(now.isoformat(timespec="seconds"))],
                           condition=Receipt.SK.exists() & unchanged & free)
    except ConditionFailed:
        fresh = get_receipt(receipt.account_id, receipt.SK)
        if fresh is None:
            raise
        if refund_of_request(fresh, request_id):
            return fresh  # this very request was made already (a double click): replayed, not repeated
        raise RefundedMeanwhile(fresh, in_progress=(fresh.RefundedAmount or 0) == expected_refunded) from None
    return receipt


def refund_of_request(receipt: Receipt, request_id: str) -> Refund | None:
    """The refund the staff form ``request_id`` made, if it was recorded."""
    return next((r for r in receipt.Refunds or [] if r.RequestId == request_id), None)


def release_refund_claim(receipt: Receipt, request_id: str) -> None:
    """Give up this request's claim (the gateway refused: nothing moved). Another
    request's claim is left alone."""
    try:
        with refused_as(ConditionFailed, receipt.SK):
            receipt.update(actions=[Receipt.RefundClaim.remove(), Receipt.RefundClaimAt.remove()],
                           condition=Receipt.RefundClaim == request_id)
    except ConditionFailed:
        pass


def record_refund(receipt: Receipt, *, refund_id: str, amount: int, actor: str, reason: str | None = None,
                  attempts: int = 3, claim: str | None = None, request_id: str | None = None,
                  action: AuditAction = AuditAction.STAFF_REFUND, line: int | None = None) -> tuple[Receipt, bool]:
    """Add one refund the gateway made to its receipt, with its audit event (money rule M6:
    the event is written here, so no caller can forget it) and the merchant's
    ``refund.created``, in one TransactWriteItems.

    Several partial refunds add up to at most ``ProcessedAmount`` (M5). The update is
    conditional on ``RefundedAmount`` as read, so two staff members refunding at once
    cannot lose one another's refund: a refused write re-reads the receipt and tries
    again. A refund id already recorded is not added twice (a retried request): returns
    (receipt, whether this call added the refund). ``claim``: the request id of the
    staff refund's claim (``claim_refund``), released by the same write; ``request_id``:
    the staff form's, kept on the refund (``refund_of_request``); ``action``: the audit
    event's (a customer's own cancel now is no staff refund); ``line``: the one invoice line
    the refund credits alone (``refundable_lines``), checked before the gateway was asked:
    should another refund have taken of that line meanwhile, the refund the gateway made
    is recorded all the same, shared over the lines.
    """
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    for _ in range(attempts):
        if any(r.RefundId == refund_id for r in receipt.Refunds or []):
            return receipt, False
        before = receipt_snapshot(receipt)
        total = (receipt.RefundedAmount or 0) + amount
        if total > receipt.ProcessedAmount:
            raise ValueError("refund exceeds the amount charged")
        status = ReceiptStatus.REFUNDED if total == receipt.ProcessedAmount else ReceiptStatus.PARTIALLY_REFUNDED
        unchanged = Receipt.RefundedAmount == (receipt.RefundedAmount or 0)
        if not receipt.RefundedAmount:
            unchanged = unchanged | Receipt.RefundedAmount.does_not_exist()
        entry = Refund(RefundId=refund_id, Amount=amount, At=iso_now(), Actor=actor, Reason=reason or None,
                       RequestId=request_id, Line=line if _line_holds(receipt, line, amount) else None)
        after = copy.deepcopy(receipt)
        after.RefundedAmount, after.Refunds, after.Status = total, [*(receipt.Refunds or []), entry], status
        refunded = new_merchant_event(MerchantEventType.REFUND_CREATED, account_id=receipt.account_id,
                                      object_type="refund", object_id=refund_id, data=refund_object(after, entry))
        event = new_event(receipt.account_id, actor=actor, action=action, subject=receipt.SK,
                          before=before, after=receipt_snapshot(after), note=reason or None)
        note_of = None
        if is_tax_invoice(receipt):  # the refund's credit note, in the same write, numbered by it
            note_of = partial(new_credit_note, receipt, refund_id=refund_id, amount=amount,
                              earlier=refunds_so_far(receipt), reason=reason, line=entry.Line)
        write = partial(_write_refund, receipt=receipt, entry=entry, total=total, status=status,
                        unchanged=unchanged, claim=claim, event=event, note_of=note_of, merchant_events=[refunded])
        try:
            with refused_as(ConditionFailed, receipt.SK):
                if note_of is None:
                    transact_with_retries(write)
                else:
                    write_numbered(CREDIT_NOTE_NUMBERS, utc_now().year, write)
        except ConditionFailed:
            fresh = get_receipt(receipt.account_id, receipt.SK)
            if fresh is None:
                raise
            receipt = fresh
            continue
        receipt.RefundedAmount, receipt.Status = total, status
        receipt.Refunds = [*(receipt.Refunds or []), entry]
        if claim:
            receipt.RefundClaim = receipt.RefundClaimAt = None
        return receipt, True
    raise ConditionFailed(receipt.SK)


def _line_holds(receipt: Receipt, line: int | None, amount: int) -> bool:
    """Whether invoice line ``line`` of ``receipt`` still holds ``amount`` (None: no line)."""
    held = None if line is None else line_left(receipt, line)
    return held is not None and amount <= held


def _write_refund(tx: Any, number: str | None = None, *, receipt: Receipt, entry: Refund, total: int, status: str,
                  unchanged: Any, claim: str | None, event: AuditEvent,
                  note_of: Callable[..., CreditNote] | None, merchant_events: list[MerchantEvent]) -> None:
    """The refund's one write: the receipt's bookkeeping (on condition), its audit event
    and, for a tax invoice, its credit note numbered ``number`` (``note_of`` makes it)
    with the totals' negative adds."""
    note = None
    if note_of is not None and number is not None:
        note = note_of(number=number)
        entry.CreditNoteNumber = number
    tx.update(receipt, actions=[
        Receipt.RefundedAmount.set(total),
        Receipt.Refunds.set(Receipt.Refunds.append([entry]) if receipt.Refunds else [entry]),
        Receipt.Status.set(status),
        *([Receipt.RefundClaim.remove(), Receipt.RefundClaimAt.remove()] if claim else []),
    ], condition=Receipt.SK.exists() & unchanged)
    tx.save(event)
    if note is not None:
        add_credit_note(tx, note)
    for merchant_event in merchant_events:
        save_item(tx, merchant_event)


def receipt_snapshot(receipt: Receipt) -> dict:
    """The receipt fields a refund changes, for audit before/after records."""
    refunds = receipt.Refunds or []
    return {
        "BillingDate": receipt.BillingDate,
        "ProcessedAmount": receipt.ProcessedAmount,
        "Currency": receipt.Currency,
        "Status": receipt.Status,
        "RefundedAmount": receipt.RefundedAmount or 0,
        "Refunds": [r.RefundId for r in refunds],
    }
