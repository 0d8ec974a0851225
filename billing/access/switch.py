"""A switch of product (billing/rules/switch.py): the subscription's new product and, for
an upgrade charged now, its receipt, in one TransactWriteItems with the audit event, on
condition that the subscription is still as the quote found it."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings

from billing.access._common import refused_as
from billing.access.due_dates import next_payment_on, next_reminder_on
from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, receipt_events, subscription_event
from billing.access.paid_changes import commit_change, paid_change, save_change
from billing.access.subscriptions import cadence_attributes
from billing.access.tax_ledger import InvoiceTax
from billing.access.usage_billing import MeteredItems, metered_actions
from billing.exceptions import ConditionFailed
from billing.models import (
    AuditAction,
    MerchantEventType,
    Product,
    Receipt,
    Subscription,
    SubscriptionStatus,
)
from billing.rules.price_objects import default_price_id
from billing.rules.schedule import renewal_reminder
from billing.rules.seat_lines import line_seats
from billing.rules.switch import SwitchQuote
from core.dynamo import engine


def _as_quoted(sub: Subscription, quote: SwitchQuote) -> object:
    """Still active, on the old product and price, paid through the same day and due on
    the same day, neither paused nor cancelling: what the quote's amounts were worked out
    from."""
    condition = ((Subscription.Status == SubscriptionStatus.ACTIVE) & (quote.old_sku == Subscription.SKU)
                 & (Subscription.PaymentAmount == quote.old_price)
                 & Subscription.CancelMode.does_not_exist() & Subscription.PausedFrom.does_not_exist())
    condition &= (Subscription.PriceId == sub.PriceId) if sub.PriceId else Subscription.PriceId.does_not_exist()
    if quote.paid_through is not None:
        condition &= Subscription.PaidThroughDate == quote.paid_through.isoformat()
    if quote.new_cadence is not None and sub.NextPaymentDate:
        condition &= Subscription.NextPaymentDate == sub.NextPaymentDate
    if quote.several_seats:  # the seats quoted (kept by the switch)
        condition &= Subscription.Quantity == quote.quantity
    return condition


def _seat_actions(quote: SwitchQuote) -> tuple[list[Any], dict[str, Any]]:
    """The seats the switch keeps: several at the new price of one (none kept for a price
    by tiers of seats, as subscribing to it keeps none); one seat, as before seats, none
    (no seat price of the old price left), but for a price by tiers of seats, whose one
    seat is kept so that a later change of seats follows the tiers (``rules.seats.
    priced_by_tiers``). Also what the write leaves, to set in memory."""
    if not quote.keeps_seats:
        return [Subscription.Quantity.remove(), Subscription.UnitAmount.remove()], \
            {"Quantity": None, "UnitAmount": None}
    unit = Subscription.UnitAmount.set(quote.unit_amount) if quote.unit_amount is not None \
        else Subscription.UnitAmount.remove()
    return [Subscription.Quantity.set(quote.quantity), unit], \
        {"Quantity": quote.quantity, "UnitAmount": quote.unit_amount}


def _cadence_actions(sub: Subscription, quote: SwitchQuote) -> tuple[list[Any], dict[str, Any]]:
    """A new cadence's attributes (none stored for the plain monthly one) and, when its
    period starts today, the schedule's dates: paid through the new period's last day, the
    next payment the day after it (its reminder: ``schedule.renewal_reminder``), paid today.
    Also what the write leaves, to set in memory."""
    cadence = quote.new_cadence
    if cadence is None:
        return [], {}
    stored = cadence_attributes(cadence)
    values: dict[str, Any] = {"PaymentDay": cadence.payment_day, "Interval": stored.get("Interval"),
                              "IntervalCount": stored.get("IntervalCount"),
                              "IntervalAnchor": stored.get("IntervalAnchor")}
    actions: list[Any] = [Subscription.PaymentDay.set(cadence.payment_day)]
    for name in ("Interval", "IntervalCount", "IntervalAnchor"):
        attribute = getattr(Subscription, name)
        actions.append(attribute.set(values[name]) if values[name] is not None else attribute.remove())
    if quote.new_period_end is not None:
        next_payment = quote.new_period_end + timedelta(days=1)
        # The cadence's own reminder (none for payments less than a month apart).
        reminder = renewal_reminder(cadence, next_payment, settings.REMINDER_DAYS_BEFORE, quote.effective)
        actions += [Subscription.PaidThroughDate.set(quote.new_period_end.isoformat()),
                    Subscription.LastPaymentDate.set(quote.effective.isoformat()),
                    *next_payment_on(sub.sub_id, next_payment), *next_reminder_on(sub.sub_id, reminder)]
        values.update({"PaidThroughDate": quote.new_period_end.isoformat(),
                       "LastPaymentDate": quote.effective.isoformat(), "NextPaymentDate": next_payment.isoformat(),
                       "NextReminderDate": reminder.isoformat() if reminder else None})
    return actions, values


def switch_subscription(sub: Subscription, product: Product, quote: SwitchQuote, *, today: date, actor: str,
                        action: AuditAction = AuditAction.SUBSCRIPTION_SWITCHED, charge_id: str | None = None,
                        charged: int = 0, retention_days: int = 400, tax: InvoiceTax | None = None,
                        receipt_sku: str | None = None, metered: MeteredItems | None = None) -> Receipt | None:
    """Move ``sub`` to ``product`` at the quote's price (and cadence, docs/MONEY.md
    "Switching price or cadence"); with ``charge_id`` (an upgrade's charge of ``charged``)
    its ``switch`` receipt too, keyed under ``receipt_sku`` (default: the product's SKU).
    One TransactWriteItems: the subscription (on condition it is as quoted: else
    ``ConditionFailed``, nothing written), the audit event and, with a charge, the
    receipt, its number (its series' counter: billing/access/receipt_numbers.py) and its
    number's look-up item, and the merchant's events. ``metered``: the metered prices a
    switch to usage alone leaves (``usage_billing.usage_alone_items``), written with it.
    Returns the receipt written."""
    before = subscription_snapshot(sub)
    previous = sub.PreviousProductName if sub.PreviousSKU else sub.ProductName
    previous_sku = sub.PreviousSKU or sub.SKU
    # the product's default price, and a metered price alone (its MeteredPriceId), are no PriceId
    price_id = quote.new_price_id if quote.new_price_id and quote.new_price_id != default_price_id(product.SKU) \
        and not quote.usage_alone else None
    actions = [Subscription.SKU.set(product.SKU), Subscription.ProductName.set(product.Name),
               Subscription.PaymentAmount.set(quote.new_price),
               Subscription.PriceId.set(price_id) if price_id else Subscription.PriceId.remove(),
               Subscription.LastSwitchDate.set(today.isoformat())]
    seat_actions, seat_values = _seat_actions(quote)
    cadence_actions, cadence_values = _cadence_actions(sub, quote)
    actions += seat_actions + cadence_actions + (metered_actions(metered) if metered else [])
    metered_values = {"MeteredPriceId": metered.price_ids[0], "OtherMeteredPriceIds": metered.price_ids[1:],
                      "MeteredPriceEnds": metered.ends, "MeteredPriceStarts": metered.starts} if metered else {}
    # At once, or back to what was paid for (the pending switch's product, its cadence kept):
    # no switch waits. Else, from the next payment: until then what was paid for.
    back = bool(sub.PreviousSKU) and previous_sku == product.SKU and quote.new_cadence is None
    pending = not quote.upgrade and not back
    if pending:
        actions += [Subscription.PreviousSKU.set(previous_sku), Subscription.PreviousProductName.set(previous),
                    Subscription.SwitchFrom.set(quote.effective.isoformat())]
    else:
        actions += [Subscription.PreviousSKU.remove(), Subscription.PreviousProductName.remove(),
                    Subscription.SwitchFrom.remove()]
    change = paid_change(sub, charge_id=charge_id, charged=charged, tax=tax)

    def write(tx: Any, number: str | None = None) -> None:
        """The switch's items; with ``number``, the upgrade's receipt so numbered."""
        receipt = lookup = None
        if number is not None:
            assert quote.charged_through is not None
            receipt, lookup = change.receipt(
                number, today=today, period_end=quote.charged_through, actor=actor,
                sku=receipt_sku or product.SKU, product_name=product.Name, kind="switch",
                retention_days=retention_days,
                # the seats it keeps, at the new price, named on its invoice line
                seats=line_seats(quote.quantity, quote.unit_amount))
            receipt.SKU = product.SKU  # the product charged; a key's mark is only the switch's
            receipt.SwitchCharge, receipt.SwitchCredit, receipt.PreviousProductName = quote.charge, quote.credit, \
                sub.ProductName
        after = {**before, "SKU": product.SKU, "ProductName": product.Name, "PaymentAmount": quote.new_price,
                 "PriceId": price_id, **seat_values, **cadence_values, **metered_values,
                 "From": quote.effective.isoformat(),
                 "Charged": charged if receipt else 0, "Receipt": receipt.SK if receipt else None}
        event = new_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                          before={**before, "SKU": sub.SKU, "ProductName": sub.ProductName, "PriceId": sub.PriceId},
                          after=after)
        # The merchant's events: subscription.switched and, for an upgrade's charge,
        # payment.succeeded and invoice.created (billing/access/outbox.py).
        merchant_events = [subscription_event(MerchantEventType.SUBSCRIPTION_SWITCHED, preview(sub, actions)),
                           *(receipt_events(receipt) if receipt is not None else [])]
        condition = _as_quoted(sub, quote)
        if metered:  # it rewrites the metered prices read: on the version read, none lost to a change since
            condition &= Subscription.Version == sub.Version
        save_change(tx, sub, actions=actions, condition=condition, event=event, receipt=receipt,
                    lookup=lookup, merchant_events=merchant_events)

    commit_change(sub, write, charging=change.charging, processed_at=change.processed_at)
    # What the update wrote, in memory as a fresh read would show it.
    sub.SKU, sub.ProductName, sub.PaymentAmount, sub.PriceId = product.SKU, product.Name, quote.new_price, price_id
    sub.LastSwitchDate = today.isoformat()
    for name, value in {**seat_values, **cadence_values}.items():  # in memory (the due keys are a fresh read's)
        setattr(sub, name, value)
    if metered:
        metered.apply_to(sub)
    sub.PreviousSKU = previous_sku if pending else None
    sub.PreviousProductName = previous if pending else None
    sub.SwitchFrom = quote.effective.isoformat() if pending else None
    return change.written_receipt


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
