"""Switching a subscription to another product, for the customer and for staff (rules:
billing/rules/switch.py). An upgrade's difference is charged at once under the key
``<SubId>:switch:<day>:<SKU>`` and recorded with the switch in one transaction; a
downgrade changes what the next payment charges. The customer is e-mailed either way.

A failed upgrade charge (declined, refused by the bank, abandoned, or its key refused by
the processor) is counted on the subscription, and the next attempt that day is keyed
``...:retry<N>`` (N failures so far), as the renewals' retries are: a card replaced after a
decline is really charged, not answered with the first decline's replay. An attempt whose
answer never came (``GatewayError``) is not counted: repeating it repeats its key.

Exactly once: the charge is keyed, and its record is conditional on the subscription
being as quoted. Should the record be refused (the subscription changed meanwhile), or
never made (a crash after the charge), the charge is recorded and refunded in full, here
or by the reconciliation (``refund_unapplied_switch``, billing/operations/refunds.py):
never kept for nothing (M2).
"""

from __future__ import annotations

import copy
import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.access import usage_billing
from billing.models import AuditAction, Price, PriceStatus, Product, Subscription
from billing.notify import manage_url, tell
from billing.operations.payments import next_charge, send_receipt
from billing.operations.refunds import refund_unapplied_switch, refund_unused_days
from billing.rules.invoice_tax import tax_metadata
from billing.rules.price_choice import TAXED_OTHERWISE, PriceRefused, choose_price, subscribable, taxed_alike
from billing.rules.price_objects import PRICE_ID_PREFIX, terms_of
from billing.rules.pricing import Interval, amount_for
from billing.rules.receipt_keys import switch_receipt_sku
from billing.rules.schedule import cadence_of, charges_paying_from
from billing.rules.seats import quantity_bounds
from billing.rules.switch import (
    SwitchQuote,
    SwitchRefused,
    SwitchTarget,
    check_switch,
    current_price_id,
    quote_switch,
    receipts_from,
    seats_refusal,
    usage_only,
)
from billing.rules.tax import TaxLine
from core.clock import billing_today
from core.mail import money_text
from core.payments.errors import GatewayError, KeyReused, PaymentError
from core.payments.gateway import ChargeResult, get_gateway

log = logging.getLogger(__name__)



class QuoteChanged(SwitchRefused):
    """The amounts changed since the customer saw them (a payment, a change of day)."""


class SwitchDeclined(PaymentError):
    """The upgrade's charge was declined: nothing switched."""


@dataclass
class Switched:
    sub: Subscription
    quote: SwitchQuote
    charged: int = 0  # minor units charged now (an upgrade)
    refunded: int = 0  # minor units refunded now (an upgrade whose paid days were paid at more)
    receipt_id: str = ""  # the switch receipt's number (or key)
    # 3-D Secure at once: the bank asks the customer on the page; nothing switched yet
    client_secret: str = ""
    charge_id: str = ""


def target_for(price: Price | None, product: Product) -> SwitchTarget:
    """``price`` (of ``product``) as a switch's target: one seat's amount, and, for a price
    sold by the seat, its bounds (and its tiers when priced by tiers of seats), so that a
    subscription of several seats keeps them (``rules.switch.seats_refusal``).
    ``SwitchRefused`` for a price that cannot be subscribed to
    (``price_choice.choose_price``'s reasons). A metered price: its usage alone, no fixed
    fee (``usage_alone`` says which metered prices the subscription then bills)."""
    if price is not None and price.Meter and price.SKU == product.SKU and price.Status == PriceStatus.ACTIVE:
        return SwitchTarget(product.SKU, product.Name, 0, price.PriceId, price.Currency.upper(),
                            Interval(price.Interval), int(price.IntervalCount or 1), metered=True,
                            usage_terms=terms_of(price), usage_unit=price.UnitLabel or None)
    try:
        chosen = choose_price(price, product, None)  # the price as such, at its least seats
    except PriceRefused as refused:
        raise SwitchRefused(str(refused)) from None
    seat: dict[str, object] = {}
    amount = chosen.amount
    if chosen.per_seat and price is not None:
        low, high = quantity_bounds(price)
        seat = {"per_seat": True, "min_quantity": max(low, 1), "max_quantity": high}
        if chosen.unit_amount is None:  # by tiers of seats: no one price a seat
            seat["terms"] = terms_of(price)
            amount = int(amount_for(terms_of(price), 1))
        else:
            amount = chosen.unit_amount
    return SwitchTarget(product.SKU, product.Name, amount, chosen.price_id, chosen.currency,
                        Interval(chosen.interval), chosen.interval_count, **seat)  # type: ignore[arg-type]


def target_of(choice: str, sub: Subscription | None = None) -> tuple[Product | None, SwitchTarget | None]:
    """The product and price ``choice`` names: a price's id (``price_...``: one of any
    product's prices), else a product's SKU (its default price, the switch of product as
    before prices). ``SwitchRefused`` for a price that cannot be subscribed to, or that
    charges the tax otherwise than ``sub``, the subscription switching (``price_choice.taxed_alike``)."""
    choice = (choice or "").strip()
    if choice.startswith(PRICE_ID_PREFIX):
        price = access.get_price(choice)
        product = access.get_product(price.SKU) if price is not None else None
        if product is None or price is None:
            raise SwitchRefused(_("That price is not offered."))
    else:
        product = access.get_product(choice.upper())
        if product is None:
            return None, None
        price = access.default_price(product)
    if sub is not None and not taxed_alike(price, sub.TaxBehavior):
        raise SwitchRefused(TAXED_OTHERWISE)
    return product, target_for(price, product)


def targets(sub: Subscription) -> list[SwitchTarget]:
    """Every price ``sub`` may be offered to switch to: the live products' active prices
    that can be subscribed to, in its currency, and take its seats, but its own (one Query of the products,
    one of each product's prices)."""
    found = []
    current = current_price_id(sub)
    own = access.metered_prices(sub) if not usage_only(sub) else {}  # read once for every metered price
    for product in access.list_products():
        for price in access.list_prices(product.SKU, product=product):
            if price.Currency.upper() != sub.Currency.upper() or price.PriceId == current \
                    or not taxed_alike(price, sub.TaxBehavior):
                continue
            if price.Meter:  # its usage alone: a plan's, of a price it could bill
                if price.Status == PriceStatus.ACTIVE and _alone_refusal(sub, price, product, own) is None:
                    found.append(target_for(price, product))
                continue
            if not subscribable(price):
                continue
            with suppress(SwitchRefused):
                target = target_for(price, product)
                if seats_refusal(sub, target) is None:  # offered only where the seats fit
                    found.append(target)
    return found


def _alone_refusal(sub: Subscription, price: Price, product: Product, own: dict[str, Price]) -> str | None:
    """Why ``sub`` cannot switch to ``price``'s usage alone (a metered price of ``product``)
    from its next payment (None: it can): ``check_switch``'s rules, then the metered prices
    it would bill (``usage_alone``). ``own``: its metered prices, read once by the caller."""
    try:
        check_switch(sub, product, billing_today(settings.BILLING_TIMEZONE), target_for(price, product))
        usage_alone(sub, price, date.fromisoformat(sub.NextPaymentDate), own=own)
    except SwitchRefused as refused:
        return str(refused)
    return None


def usage_alone(sub: Subscription, price: Price | str, first_day: date, *,
                own: dict[str, Price] | None = None) -> usage_billing.MeteredItems:
    """The metered prices ``sub`` bills once switched to ``price``'s usage alone (a price, or
    its id) from ``first_day`` (``usage_billing.usage_alone_items``; ``own``: its metered
    prices, when read already); ``SwitchRefused`` naming why it cannot."""
    found = access.get_price(price) if isinstance(price, str) else price
    price_id = price if isinstance(price, str) else price.PriceId
    try:
        return usage_billing.usage_alone_items(sub, found, price_id, first_day, own=own)
    except usage_billing.NotMetered as refused:
        raise SwitchRefused(str(refused)) from None


def quote(sub: Subscription, choice: str, *, today: date) -> SwitchQuote:
    """What switching ``sub`` to ``choice`` (a price's id, or a product's SKU: its default
    price) today costs; ``SwitchRefused`` says why it cannot. The confirm pages and the
    API's preview show it, and ``switch`` charges it."""
    return _quoted(sub, choice, today=today)[0]


def _quoted(sub: Subscription, choice: str, *, today: date) -> tuple[SwitchQuote, usage_billing.MeteredItems | None]:
    """``quote``'s quote, and for a switch to usage alone the metered prices it leaves
    (worked out here so that a refusal shows on the confirm page, and only once)."""
    product, target = target_of(choice, sub)
    product = check_switch(sub, product, today, target)
    back = receipts_from(sub, today, charges_paying_from(cadence_of(sub), today))
    receipts = access.get_receipts_by_account(sub.account_id, back, today)
    # Prices before tax: the credit is counted before tax too, and the tax added once.
    q = quote_switch(sub, target or product, receipts, today, before_tax=not access.tax_terms(sub).prices_include_tax)
    return q, usage_alone(sub, q.new_price_id, q.effective) if q.usage_alone else None


def receipt_sku(q: SwitchQuote) -> str:
    """The SKU in the switch receipt's key (and the charge's ``sku`` metadata, by which the
    reconciliation finds it): billing/rules/receipt_keys.py."""
    return switch_receipt_sku(q.old_sku, q.new_sku)


class AttemptUnsettled(SwitchRefused):
    """The processor refused this attempt's key: an earlier attempt under it, with other
    payment details, has no answer here. Nothing was switched; the next attempt has a key
    of its own (a charge the earlier attempt took is refunded by the reconciliation,
    ``refund_unapplied_switch``)."""


def switch_key(sub: Subscription, q: SwitchQuote, today: date) -> str:
    """The charge's idempotency key: one per attempt that can be answered (M5), a new one
    after each failed attempt of the day (``access.switch_failures``)."""
    key = f"{sub.sub_id}:switch:{today.isoformat()}:{q.choice}"
    failures = access.switch_failures(sub, today)
    return f"{key}:retry{failures}" if failures else key


def switch(sub: Subscription, sku: str, *, today: date, actor: str, expected: SwitchQuote | None = None,
           action: AuditAction = AuditAction.SUBSCRIPTION_SWITCHED, on_session: bool = True) -> Switched:
    """Switch now to ``sku`` (a product's SKU or a price's id), at the amounts ``expected``
    (the confirm page's: ``QuoteChanged`` otherwise). ``SwitchDeclined`` when the
    upgrade's charge is declined; ``GatewayError`` when the gateway cannot say (nothing
    switched; the same key is safe to repeat)."""
    q, metered = _quoted(sub, sku, today=today)
    if expected is not None and (q.choice, q.due_now, q.upgrade) != (expected.choice, expected.due_now,
                                                                     expected.upgrade):
        raise QuoteChanged(_("The amounts changed since you looked: please check them again."))
    result = None
    if q.upgrade and q.due_now > 0:
        line = _taxed(sub, q, today)
        metadata = {
            "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": receipt_sku(q), "kind": "switch",
            "billing_date": today.isoformat(), "period_start": today.isoformat(),
            "period_end": q.charged_through.isoformat() if q.charged_through else today.isoformat(),
            "switch_charge": str(q.charge), "switch_credit": str(q.credit), "old_sku": q.old_sku,
            "payment_day": str(q.new_cadence.payment_day if q.new_cadence else sub.PaymentDay),
            "price": str(q.new_price), "price_id": q.new_price_id,
            # the seats it pays for, as a change of seats' charge names them
            **({"quantity": str(q.quantity), "unit_amount": str(q.unit_amount if q.unit_amount is not None else "")}
               if q.several_seats else {}),
            **tax_metadata(line, prices_include_tax=access.tax_terms(sub).prices_include_tax),
        }
        try:
            result = get_gateway().charge(sub.PaymentDetails.Token, line.gross, sub.Currency,
                                          switch_key(sub, q, today), metadata, off_session=not on_session)
        except KeyReused:
            access.count_switch_failure(sub, today)
            raise AttemptUnsettled(_("An earlier attempt of this switch, with other payment details, is not "
                                     "settled: nothing was switched or charged now. Please try again: anything "
                                     "the earlier attempt took is refunded.")) from None
        if result.needs_authentication:
            return Switched(sub, q, client_secret=result.client_secret, charge_id=result.charge_id)
        if not result.succeeded:
            access.count_switch_failure(sub, today)
            raise SwitchDeclined(result.decline_code or "declined")
    return _apply(sub, q, result, today=today, actor=actor, action=action, metered=metered)


def finish_authenticated(sub: Subscription, sku: str, charge_id: str, *, today: date, actor: str) -> Switched:
    """After the customer confirmed the upgrade's charge with their bank: switched if paid
    (``SwitchDeclined`` if the bank refused; the charge is cancelled)."""
    gateway = get_gateway()
    result = gateway.charge_status(charge_id)
    if result.metadata.get("sub_id") != sub.sub_id or result.metadata.get("kind") != "switch":
        raise ValueError(f"charge {charge_id} is not a switch of {sub.sub_id}")
    if result.needs_authentication:
        return Switched(sub, quote(sub, sku, today=today), client_secret=result.client_secret, charge_id=charge_id)
    if not result.succeeded:
        access.count_switch_failure(sub, today)
        raise SwitchDeclined(result.decline_code or "authentication_failed")
    try:
        q = quote(sub, sku, today=today)
    except SwitchRefused:
        refund_unapplied_switch(sub, result, actor=actor)
        raise
    if _taxed(sub, q, today).gross != result.amount or result.metadata.get("period_end") != str(q.charged_through):
        refund_unapplied_switch(sub, result, actor=actor)  # paid for other days: given back, asked again
        raise QuoteChanged(_("The amounts changed while your bank was asked: the payment is refunded."))
    return _apply(sub, q, result, today=today, actor=actor, action=AuditAction.SUBSCRIPTION_SWITCHED)


def charged_now(sub: Subscription, q: SwitchQuote) -> int:
    """What an upgrade charges now, as ``switch`` charges it (its tax added when prices
    exclude it): the confirm pages show it."""
    return _taxed(sub, q, q.effective).gross if q.upgrade and q.due_now > 0 else q.due_now


def refunded_now(sub: Subscription, q: SwitchQuote) -> int:
    """What an upgrade refunds now (its credit above the new price), as ``switch`` refunds
    it: those days as they were charged, the tax added when prices exclude it (the quote's
    credit is then before tax), as ``seats.credited_now``. The pages and the API show it."""
    return access.tax_terms(sub).line(q.refund_now, q.effective).gross if q.refund_now else 0


def _taxed(sub: Subscription, q: SwitchQuote, today: date) -> TaxLine:
    """The upgrade's charge now: its price (``due_now``, after the credit, both on the
    prices' footing) taxed as the subscription's payments are; tax-exclusive prices charge
    the price plus the tax, once."""
    return access.tax_terms(sub).line(q.due_now, today)


def _apply(sub: Subscription, q: SwitchQuote, result: ChargeResult | None, *, today: date, actor: str,
           action: AuditAction, metered: usage_billing.MeteredItems | None = None) -> Switched:
    product = access.get_product(q.new_sku)
    assert product is not None
    old_name = sub.ProductName or sub.SKU
    excess = refunded_now(sub, q)  # on the subscription as quoted, before the switch moves it
    if q.usage_alone and metered is None:  # not handed on by the quote
        metered = usage_alone(sub, q.new_price_id, q.effective)
    try:
        receipt = access.switch_subscription(
            sub, product, q, today=today, actor=actor, action=action, metered=metered,
            charge_id=result.charge_id if result else None, charged=result.amount if result else 0,
            retention_days=settings.RECEIPT_RETENTION_DAYS, receipt_sku=receipt_sku(q),
            tax=access.invoice_tax(sub, amount=result.amount, on=today, metadata=result.metadata) if result else None)
    except access.ConditionFailed:
        if result is not None:
            refund_unapplied_switch(sub, result, actor=actor)
        raise
    charged = result.amount if result and receipt else 0
    refunded = _refund_excess_credit(sub, q, excess, today=today, actor=actor) if excess else 0
    if result is not None and receipt is not None:
        # The charge's invoice, by the e-mail every charge sends (the renewals' receipt).
        send_receipt(sub, receipt, True, result, today, q.charged_through or today, _next_payment_date(sub))
    tell("subscription_switched", sub, format_lazy(_("Your subscription now: {product}"), product=product.Name),
         old_product=old_name, upgrade=q.upgrade, effective=q.effective, period_end=q.new_period_end,
         **_next_payment(sub),
         charged=money_text(charged, sub.Currency) if charged else "",
         credit=money_text(q.credit, sub.Currency), charge=money_text(q.charge, sub.Currency),
         refunded=money_text(refunded, sub.Currency) if refunded else "",
         receipt_number=receipt.Number if receipt else "", manage_url=manage_url(sub),
         seats=q.quantity if q.several_seats else 0,  # the seats it keeps ("5 seats"); 0: one
         usage_alone=q.usage_alone)
    return Switched(sub, q, charged=charged, refunded=refunded, receipt_id=(receipt.url_id if receipt else ""))


def _next_payment(sub: Subscription) -> dict[str, object]:
    """The switched subscription's next payment for the e-mail: what the payment run will
    charge (``payments.next_charge``, the function ``take_payment`` charges by: the new
    price, less the coupon's discount for that payment, the tax as charged), never the new
    product's list price."""
    if not sub.is_live or not sub.NextPaymentDate:
        return {}
    coming = next_charge(sub)
    return {"next_date": coming.date, "next_amount": money_text(coming.amount, sub.Currency)}


def _next_payment_date(sub: Subscription) -> date | None:
    return date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate else None


def _refund_excess_credit(sub: Subscription, q: SwitchQuote, excess: int, *, today: date, actor: str) -> int:
    """The credit for the paid days exceeds the new product's price of them (they were paid
    at a higher price than the subscription's now, before a downgrade not yet in force):
    the difference (``excess``: ``refunded_now``, tax included as those days were charged)
    is refunded, from the receipts that paid those days, newest first, each
    at most its unused share, under ``refund:<ChargeId>:switch-<day>`` (a repeat refunds
    once; M5). Returns what was refunded; a refund the gateway refuses is audited by
    ``refund_receipt`` and left to staff."""
    return refund_unused_days(sub, excess, today=today, actor=actor,
                              request_id=f"switch-{today.isoformat()}",
                              reason=f"switched to {q.new_name}: paid days cost less")


def abandon(done: Switched, *, today: date) -> None:
    """Give up an upgrade whose charge waits for the customer's bank (staff cannot confirm
    it): cancelled at the gateway, and counted as failed (the customer's own attempt later
    that day has a key of its own, not the cancelled charge's). Unreachable: left; never
    confirmed, it is never paid, and a late success is refunded by the reconciliation
    (``refund_unapplied_switch``)."""
    if done.charge_id:
        access.count_switch_failure(done.sub, today)
        with suppress(GatewayError):
            get_gateway().cancel_charge(done.charge_id)


def as_switched(sub: Subscription, quote: SwitchQuote) -> Subscription:
    """A copy of ``sub`` as the switch leaves it (its price, cadence and, when a new period
    starts today, its dates), for the projection to walk: the pages' "your next payment"
    after the switch is the run's charge of that item."""
    after = copy.deepcopy(sub)
    after.PaymentAmount = quote.new_price
    after.Quantity = quote.quantity if quote.keeps_seats else None  # as the switch writes them
    after.UnitAmount = quote.unit_amount if quote.keeps_seats else None
    cadence = quote.new_cadence
    if cadence is not None:
        after.PaymentDay = cadence.payment_day
        monthly = cadence.is_monthly
        after.Interval = None if monthly else str(cadence.interval)
        after.IntervalCount = None if monthly else cadence.count
        after.IntervalAnchor = cadence.anchor.isoformat() if cadence.anchor and not monthly else None
    if quote.new_period_end is not None:  # in memory only: the projection walks from these dates
        dates = {"PaidThroughDate": quote.new_period_end, "NextPaymentDate": quote.new_period_end + timedelta(days=1),
                 "LastPaymentDate": quote.effective}
        for name, day in dates.items():
            setattr(after, name, day.isoformat())
    return after
