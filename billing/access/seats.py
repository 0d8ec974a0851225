"""A change of seats (billing/rules/seats.py): the subscription's new quantity and price
and, for more seats charged now, their receipt, in one TransactWriteItems with the audit
event and the merchant's ``subscription.updated``, on condition that the subscription is
still as the quote found it (the switch's way: billing/access/switch.py)."""

from __future__ import annotations

from datetime import date
from typing import Any

from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, receipt_events, subscription_event
from billing.access.paid_changes import commit_change, no_switch_pending, paid_change, save_change
from billing.access.tax_ledger import InvoiceTax
from billing.models import (
    AuditAction,
    MerchantEventType,
    Receipt,
    Subscription,
    SubscriptionStatus,
)
from billing.rules import receipt_keys
from billing.rules.seat_lines import line_seats
from billing.rules.seats import SeatsQuote


def seats_receipt_sku(sub: Subscription, version: int | None) -> str:
    """The SKU in a seats charge's receipt key: ``receipt_keys.seats_receipt_sku`` of the
    subscription's product at the version quoted."""
    return receipt_keys.seats_receipt_sku(sub.SKU, version)


def _as_quoted(sub: Subscription, quote: SeatsQuote, today: date) -> Any:
    """Still active, with the seats and price quoted, paid through the same day, neither
    paused, cancelling nor switching at its next payment (``no_switch_pending``), and no payment due (the payment
    day's lock: a run charging meanwhile has not advanced ``NextPaymentDate`` yet)."""
    condition = ((Subscription.Status == SubscriptionStatus.ACTIVE)
                 & (Subscription.NextPaymentDate > today.isoformat())
                 & (Subscription.PaymentAmount == quote.old_price)
                 & Subscription.CancelMode.does_not_exist() & Subscription.PausedFrom.does_not_exist()
                 & no_switch_pending(today))
    condition &= (Subscription.Quantity == quote.old_quantity) if sub.Quantity is not None \
        else Subscription.Quantity.does_not_exist()
    if quote.paid_through is not None:
        condition &= Subscription.PaidThroughDate == quote.paid_through.isoformat()
    return condition


def change_seats(sub: Subscription, quote: SeatsQuote, *, today: date, actor: str,
                 action: AuditAction = AuditAction.QUANTITY_CHANGED, charge_id: str | None = None,
                 charged: int = 0, receipt_sku: str | None = None, retention_days: int = 400,
                 tax: InvoiceTax | None = None) -> Receipt | None:
    """Give ``sub`` the quote's seats (``Quantity``, ``UnitAmount``, ``PaymentAmount`` =
    their product); with ``charge_id`` (more seats' charge of ``charged``) their ``seats``
    receipt too, keyed under ``receipt_sku``. One TransactWriteItems: the subscription (on
    condition it is as quoted: else ``ConditionFailed``, nothing written), the audit
    event, ``subscription.updated`` and, with a charge, the receipt, its number and look-up
    and its events. Returns the receipt written."""
    before = subscription_snapshot(sub)
    # A price by tiers of seats keeps no price a seat (``rules.seats.priced_by_tiers``).
    unit = Subscription.UnitAmount.set(quote.unit_amount) if quote.unit_amount is not None \
        else Subscription.UnitAmount.remove()
    actions = [Subscription.Quantity.set(quote.new_quantity), unit, Subscription.PaymentAmount.set(quote.new_price)]
    change = paid_change(sub, charge_id=charge_id, charged=charged, tax=tax)

    def write(tx: Any, number: str | None = None) -> None:
        receipt = lookup = None
        if number is not None:
            assert quote.paid_through is not None
            receipt, lookup = change.receipt(
                number, today=today, period_end=quote.paid_through, actor=actor,
                sku=receipt_sku or seats_receipt_sku(sub, sub.Version), product_name=sub.ProductName or sub.SKU,
                kind="seats", retention_days=retention_days,
                seats=line_seats(quote.new_quantity, quote.unit_amount, added_from=quote.old_quantity))
            receipt.SKU = sub.SKU  # the product charged; the key's mark is only the change's
        after = {**before, "Quantity": quote.new_quantity, "UnitAmount": quote.unit_amount,
                 "PaymentAmount": quote.new_price, "Charged": charged if receipt else 0,
                 "Credit": quote.credit_now, "Receipt": receipt.SK if receipt else None}
        event = new_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                          before={**before, "Quantity": quote.old_quantity}, after=after)
        merchant_events = [subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, preview(sub, actions)),
                           *(receipt_events(receipt) if receipt is not None else [])]
        save_change(tx, sub, actions=actions, condition=_as_quoted(sub, quote, today), event=event, receipt=receipt,
                    lookup=lookup, merchant_events=merchant_events)

    commit_change(sub, write, charging=change.charging, processed_at=change.processed_at)
    # What the update wrote, in memory as a fresh read would show it (the transaction
    # moved the version on itself).
    sub.Quantity, sub.UnitAmount, sub.PaymentAmount = quote.new_quantity, quote.unit_amount, quote.new_price
    return change.written_receipt
