"""A switch of product (billing/rules/switch.py): the subscription's new product and, for
an upgrade charged now, its receipt, in one TransactWriteItems with the audit event, on
condition that the subscription is still as the quote found it."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings

from billing.access._common import refused_as, utc_now
from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, receipt_events, subscription_event
from billing.access.paid_changes import commit_change, save_change
from billing.access.receipts import build_receipt
from billing.access.tax_ledger import InvoiceTax, invoice_tax
from billing.exceptions import ConditionFailed
from billing.models import (
    AuditAction,
    MerchantEventType,
    Product,
    Receipt,
    Subscription,
    SubscriptionStatus,
)
from billing.rules.switch import SwitchQuote
from core.clock import billing_today
from core.dynamo import engine


def _as_quoted(sub: Subscription, quote: SwitchQuote) -> object:
    """Still active, on the old product, paid through the same day, neither paused nor
    cancelling: what the quote's amounts were worked out from."""
    condition = ((Subscription.Status == SubscriptionStatus.ACTIVE) & (quote.old_sku == Subscription.SKU)
                 & Subscription.CancelMode.does_not_exist() & Subscription.PausedFrom.does_not_exist())
    if quote.paid_through is not None:
        condition &= Subscription.PaidThroughDate == quote.paid_through.isoformat()
    return condition


def switch_subscription(sub: Subscription, product: Product, quote: SwitchQuote, *, today: date, actor: str,
                        action: AuditAction = AuditAction.SUBSCRIPTION_SWITCHED, charge_id: str | None = None,
                        charged: int = 0, retention_days: int = 400, tax: InvoiceTax | None = None,
                        ) -> Receipt | None:
    """Move ``sub`` to ``product``; with ``charge_id`` (an upgrade's charge of ``charged``)
    its ``switch`` receipt too. One TransactWriteItems: the subscription (on condition it
    is as quoted: else ``ConditionFailed``, nothing written), the audit event and, with a
    charge, the receipt, its number (its series' counter: billing/access/receipt_numbers.py)
    and its number's look-up item, and the merchant's events. Returns the receipt written."""
    before = subscription_snapshot(sub)
    previous = sub.PreviousProductName if sub.PreviousSKU else sub.ProductName
    previous_sku = sub.PreviousSKU or sub.SKU
    actions = [Subscription.SKU.set(product.SKU), Subscription.ProductName.set(product.Name),
               Subscription.PaymentAmount.set(int(product.PaymentAmount)),
               Subscription.LastSwitchDate.set(today.isoformat()),
               # one seat (``check_switch``) at the new product's price: no seat price of the old one left
               Subscription.Quantity.remove(), Subscription.UnitAmount.remove()]
    if quote.upgrade or previous_sku == product.SKU:  # at once, or back to what was paid for
        actions += [Subscription.PreviousSKU.remove(), Subscription.PreviousProductName.remove(),
                    Subscription.SwitchFrom.remove()]
    else:  # from the next payment: until then the product paid for
        actions += [Subscription.PreviousSKU.set(previous_sku), Subscription.PreviousProductName.set(previous),
                    Subscription.SwitchFrom.set(quote.effective.isoformat())]
    charging = bool(charge_id and charged > 0)
    processed_at = utc_now()
    tax = tax or (invoice_tax(sub, amount=charged, on=billing_today(settings.BILLING_TIMEZONE, processed_at))
                  if charging else None)
    written: list[Receipt] = []

    def write(tx: Any, number: str | None = None) -> None:
        """The switch's items; with ``number``, the upgrade's receipt so numbered."""
        receipt = lookup = None
        if number is not None:
            assert quote.paid_through is not None
            receipt, lookup, _ = build_receipt(
                sub, billing_date=today, amount=charged, currency=sub.Currency, charge_id=charge_id,
                retention_days=retention_days, period_end=quote.paid_through, actor=actor, sku=product.SKU,
                tax=tax, product_name=product.Name, kind="switch", number=number, processed_at=processed_at)
            receipt.SwitchCharge, receipt.SwitchCredit, receipt.PreviousProductName = quote.charge, quote.credit, \
                sub.ProductName
            written[:] = [receipt]
        after = {**before, "SKU": product.SKU, "ProductName": product.Name,
                 "PaymentAmount": int(product.PaymentAmount), "From": quote.effective.isoformat(),
                 "Charged": charged if receipt else 0, "Receipt": receipt.SK if receipt else None}
        event = new_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                          before={**before, "SKU": sub.SKU, "ProductName": sub.ProductName}, after=after)
        # The merchant's events: subscription.switched and, for an upgrade's charge,
        # payment.succeeded and invoice.created (billing/access/outbox.py).
        merchant_events = [subscription_event(MerchantEventType.SUBSCRIPTION_SWITCHED, preview(sub, actions)),
                           *(receipt_events(receipt) if receipt is not None else [])]
        save_change(tx, sub, actions=actions, condition=_as_quoted(sub, quote), event=event, receipt=receipt,
                    lookup=lookup, merchant_events=merchant_events)

    commit_change(sub, write, charging=charging, processed_at=processed_at)
    receipt = written[0] if written else None
    # What the update wrote, in memory as a fresh read would show it.
    sub.SKU, sub.ProductName, sub.PaymentAmount = product.SKU, product.Name, int(product.PaymentAmount)
    sub.LastSwitchDate = today.isoformat()
    sub.Quantity = sub.UnitAmount = None
    downgrade = not quote.upgrade and previous_sku != product.SKU
    sub.PreviousSKU = previous_sku if downgrade else None
    sub.PreviousProductName = previous if downgrade else None
    sub.SwitchFrom = quote.effective.isoformat() if downgrade else None
    return receipt


def count_switch_failure(sub: Subscription, today: date) -> None:
    """One more failed upgrade charge on ``today`` (``Subscription.SwitchFailures``). A
    plain attribute write, conditional on the count read and without the version: a decline
    changes nothing the customer sees, so a page drawn before it is not stale. Refused: a
    concurrent attempt counted its own failure, and the next attempt's key is new anyway."""
    count = switch_failures(sub, today) + 1
    value = f"{today.isoformat()}:{count}"
    condition = (Subscription.SwitchFailures == sub.SwitchFailures) if sub.SwitchFailures \
        else Subscription.SwitchFailures.does_not_exist()
    try:
        with refused_as(ConditionFailed, sub.SK):
            engine.table_connection(Subscription).update_item(
                sub.PK, range_key=sub.SK, actions=[Subscription.SwitchFailures.set(value)], condition=condition)
    except ConditionFailed:
        return
    sub.SwitchFailures = value


def switch_failures(sub: Subscription, today: date) -> int:
    """How many upgrade charges of ``sub`` failed on ``today`` (0 on another day)."""
    day, _, count = (sub.SwitchFailures or "").partition(":")
    return int(count) if day == today.isoformat() and count.isdigit() else 0
