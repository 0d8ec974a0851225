"""Changing a subscription's seats, for the customer, staff and the API (rules:
billing/rules/seats.py; docs/MONEY.md M7).

More seats: their price of the days already paid is charged at once, as a switch's
upgrade is (billing/actions/switch.py), under the key ``<SubId>:seats:<day>:v<Version>:<N>``:
one key per change, since every change moves the subscription's version on. A request
repeated before its change was written (a retry after a timeout, a page sent twice)
repeats the key, and the processor answers with the first charge: charged once. After
the change the version has moved, so a page or an API call made against the old version
is refused as stale before anything is charged (``SeatsChanged``); the API's
Idempotency-Key replays its first answer.

Fewer seats: their price of the same days is credited at once, refunded to the card from
the receipts that paid those days (``refund:<ChargeId>:seats-v<Version>``).

The change, its audit event, ``subscription.updated`` and more seats' receipt are one
transaction, on condition the subscription is still as quoted; refused after the charge
(changed meanwhile), or never made (a crash), the charge is refunded in full, here or by
the reconciliation (``refund_unapplied_switch``): never kept for nothing (M2).
"""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import AuditAction, Price, Subscription
from billing.notify import manage_url, tell
from billing.operations.payments import next_charge, send_receipt
from billing.operations.refunds import refund_unapplied_switch, refund_unused_days
from billing.rules.invoice_tax import tax_metadata
from billing.rules.price_objects import terms_of
from billing.rules.pricing import PriceTerms
from billing.rules.seats import (
    SeatsQuote,
    SeatsRefused,
    check_change,
    priced_by_tiers,
    quantity_bounds,
    quote_seats,
    tier_price_words,
)
from billing.rules.tax import TaxLine
from core.mail import money_text
from core.payments.errors import GatewayError, KeyReused, PaymentError
from core.payments.gateway import ChargeResult, get_gateway

log = logging.getLogger(__name__)


class SeatsChanged(SeatsRefused):
    """The subscription changed since the page (or the caller) read it: nothing was done."""


class SeatsDeclined(PaymentError):
    """More seats' charge was declined (or the bank asked the customer to confirm it, which
    this change does not do): nothing changed."""


@dataclass
class SeatsChange:
    sub: Subscription
    quote: SeatsQuote
    charged: int = 0  # minor units charged now (more seats), tax included
    credited: int = 0  # minor units refunded now (fewer seats)
    receipt_id: str = ""  # more seats' receipt's number


def price_of(sub: Subscription) -> Price | None:
    """The catalog price the subscription pays (``PriceId``; one GetItem), for its quantity
    bounds. None: the product's derived default price, which names no bounds."""
    return access.get_price(sub.PriceId) if sub.PriceId else None


@dataclass(frozen=True)
class SeatPrice:
    """What a change of ``sub``'s seats is priced by, from one read of its price: the
    quantities allowed, and the price's terms when its seats are priced by tiers."""

    bounds: tuple[int, int]
    terms: PriceTerms | None = None  # a price by tiers of seats (``rules.seats.priced_by_tiers``)
    unit_label: str | None = None

    def words(self) -> str:
        """The tiers in the active language ("first 10 seats at $10.00 a seat, then …"); ""
        for a price of one amount a seat (the pages say "$10.00 a seat")."""
        return tier_price_words(self.terms, self.unit_label) if self.terms is not None else ""


def seat_price(sub: Subscription) -> SeatPrice:
    price = price_of(sub)
    terms = terms_of(price) if price is not None and priced_by_tiers(sub) else None
    return SeatPrice(quantity_bounds(price), terms, price.UnitLabel if price is not None else None)


def bounds_of(sub: Subscription) -> tuple[int, int]:
    """The quantities ``sub`` may have: its price's MinQuantity/MaxQuantity when it has a
    price that names them, else 1..10,000 (``rules.seats``)."""
    return quantity_bounds(price_of(sub))


def quote(sub: Subscription, quantity: int, *, today: date, priced: SeatPrice | None = None) -> SeatsQuote:
    """What changing ``sub`` to ``quantity`` seats today costs or credits; ``SeatsRefused``
    (``QuantityOutOfBounds``) says why it cannot. ``priced``: ``seat_price(sub)`` when the
    caller read it already."""
    priced = priced or seat_price(sub)
    check_change(sub, quantity, priced.bounds, today)
    return quote_seats(sub, quantity, today, priced.terms)


def charged_now(sub: Subscription, q: SeatsQuote) -> int:
    """What more seats charge now, as ``change_quantity`` charges it (the tax added when
    prices exclude it): the page shows this before the customer confirms."""
    return _taxed(sub, q).gross if q.due_now > 0 else 0


def credited_now(sub: Subscription, q: SeatsQuote) -> int:
    """What fewer seats refund now, as ``change_quantity`` refunds it: the removed seats'
    days as they were charged (the tax added when prices exclude it), so that adding seats
    and removing them again the same day nets to nothing, tax included."""
    return access.tax_terms(sub).line(q.credit_now, q.paid_from).gross if q.credit_now else 0


def shown_now(sub: Subscription, q: SeatsQuote) -> int:
    """The one amount a confirm page shows and sends back: charged, else credited."""
    return charged_now(sub, q) if q.due_now else credited_now(sub, q)


def seats_key(sub: Subscription, q: SeatsQuote, today: date) -> str:
    """The charge's idempotency key: the change (the day, the version it was quoted at,
    the quantity asked for). The same request repeats it; a new card, a payment or any
    change moves the version, and another day has other amounts: each a key of its own
    (a key reused with other amounts is refused by Stripe)."""
    return f"{sub.sub_id}:seats:{today.isoformat()}:v{int(sub.Version or 0)}:{q.new_quantity}"


def change_quantity(sub: Subscription, quantity: int, actor: str, *, today: date,
                    expected_version: int | None = None, expected_amount: int | None = None,
                    action: AuditAction = AuditAction.QUANTITY_CHANGED) -> SeatsChange:
    """Change ``sub`` to ``quantity`` seats now. ``expected_version``: the version the page
    (or the caller) read, ``expected_amount``: the amount it showed (``charged_now`` or the
    credit); either differing now is ``SeatsChanged``, before any money moves.
    ``SeatsDeclined``: the charge was declined; ``GatewayError``: the processor could not
    say (nothing changed; the same request is safe to repeat)."""
    if expected_version is not None and int(sub.Version or 0) != expected_version:
        raise SeatsChanged(_("The subscription changed since you looked: please check the seats again."))
    priced = seat_price(sub)
    q = quote(sub, quantity, today=today, priced=priced)
    if expected_amount is not None and expected_amount != shown_now(sub, q):
        raise SeatsChanged(_("The amounts changed since you looked: please check them again."))
    key = seats_key(sub, q, today)
    receipt_sku = access.seats_receipt_sku(sub, sub.Version)
    result = _charge(sub, q, key, receipt_sku, today) if q.due_now > 0 else None
    request_id = f"seats-v{int(sub.Version or 0)}"
    try:
        receipt = access.change_seats(
            sub, q, today=today, actor=actor, action=action, charge_id=result.charge_id if result else None,
            charged=result.amount if result else 0, receipt_sku=receipt_sku,
            retention_days=settings.RECEIPT_RETENTION_DAYS,
            tax=access.invoice_tax(sub, amount=result.amount, on=today, metadata=result.metadata) if result else None)
    except access.ConditionFailed:
        if result is not None:
            refund_unapplied_switch(sub, result, actor=actor)  # bought nothing: given back whole
        raise
    credited = refund_unused_days(sub, credited_now(sub, q), today=today, actor=actor, request_id=request_id,
                                  reason=f"{q.old_quantity - q.new_quantity} fewer seats") if q.credit_now else 0
    charged = result.amount if result and receipt else 0
    if result is not None and receipt is not None:
        # The charge's invoice, by the e-mail every charge sends (the renewals' receipt).
        send_receipt(sub, receipt, True, result, today, q.paid_through or today,
                     date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate else None)
    _tell(sub, q, charged=charged, credited=credited, priced=priced)
    return SeatsChange(sub, q, charged=charged, credited=credited, receipt_id=receipt.url_id if receipt else "")


def _charge(sub: Subscription, q: SeatsQuote, key: str, receipt_sku: str, today: date) -> ChargeResult:
    """More seats' charge, off-session (as staff's switch: a bank that wants the customer
    to confirm refuses it here, and the charge waiting for them is cancelled)."""
    line = _taxed(sub, q)
    assert q.paid_through is not None
    metadata = {
        "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": receipt_sku, "kind": "seats",
        "billing_date": today.isoformat(), "period_start": today.isoformat(),
        "period_end": q.paid_through.isoformat(), "quantity": str(q.new_quantity),
        "old_quantity": str(q.old_quantity), "unit_amount": str(q.unit_amount if q.unit_amount is not None else ""),
        "payment_day": str(sub.PaymentDay), "price": str(q.due_now),
        **tax_metadata(line, prices_include_tax=access.tax_terms(sub).prices_include_tax),
    }
    gateway = get_gateway()
    try:
        result = gateway.charge(sub.PaymentDetails.Token, line.gross, sub.Currency, key, metadata, off_session=True)
    except KeyReused:  # an earlier attempt with other details: nothing changed, the version moves the key on
        raise SeatsChanged(_("An earlier attempt of this change, with other payment details, is not settled: "
                             "nothing was changed now. Please try again.")) from None
    if result.needs_authentication:
        with suppress(GatewayError):
            gateway.cancel_charge(result.charge_id)
        raise SeatsDeclined("authentication_required")
    if not result.succeeded:
        raise SeatsDeclined(result.decline_code or "declined")
    return result


def _taxed(sub: Subscription, q: SeatsQuote) -> TaxLine:
    """More seats' charge now: ``due_now`` taxed as the subscription's payments are (on
    the first day it pays for); tax-exclusive prices charge the price plus the tax."""
    return access.tax_terms(sub).line(q.due_now, q.paid_from)


def _tell(sub: Subscription, q: SeatsQuote, *, charged: int, credited: int, priced: SeatPrice) -> None:
    """The "your seats now" e-mail: the seats, the price a seat (or the tiers, drawn when
    the e-mail is, in the customer's language), what was charged or credited, and the next
    payment as the payment run will take it (``next_charge``)."""
    money = sub.Currency
    context: dict[str, Any] = {
        "quantity": q.new_quantity, "old_quantity": q.old_quantity, "more": q.more,
        "unit_price": money_text(q.unit_amount, money) if q.unit_amount is not None else "",
        "tiers": priced.words if priced.terms is not None else "",
        "charged": money_text(charged, money) if charged else "",
        "credited": money_text(credited, money) if credited else "",
        "paid_through": q.paid_through, "manage_url": manage_url(sub),
    }
    if sub.is_live and sub.NextPaymentDate:
        coming = next_charge(sub)
        context |= {"next_date": coming.date, "next_amount": money_text(coming.amount, money)}
    tell("seats_changed", sub, format_lazy(_("Your seats now: {quantity}"), quantity=q.new_quantity), **context)
