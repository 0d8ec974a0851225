"""How the API and the outbound webhook events show each object: pure functions from the
stored items to JSON-ready dicts, the one representation of each (a change to a field is
made here, and both the API's answers and the events carry it).

Each dict has ``"object"`` (its type) and ``"id"``: the id the pages put in their URLs
(a customer's account id, a subscription's id, a receipt's number, or its key when it has
none, a product's SKU, a coupon's code, a dispute's processor id). Amounts are integers in
minor units beside their ``currency``; dates are ISO-8601 strings (days ``YYYY-MM-DD``, times
with their offset) as stored. A subscription's ``status`` is the pages' state
(``rules.lifecycle.state_of``) and ``status_label`` the customer pages' English words for
it (``rules.state_words``); its next payment is the projection's first coming charge, the
one the payment run charges (``rules.projection``): nothing here computes an amount.

Pure: no I/O. The objects whose words depend on the day take ``today``: the caller's billing day.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.utils.translation import override

from billing.models import (
    Account,
    Coupon,
    CouponStatus,
    DisputeEntry,
    MerchantEvent,
    Product,
    Receipt,
    Refund,
    Subscription,
    TaxLineMap,
    WebhookEndpoint,
)
from billing.rules.add_ons import current_add_ons
from billing.rules.coupons import refusal
from billing.rules.invoice import line_of
from billing.rules.lifecycle import state_of
from billing.rules.price_objects import default_price_id
from billing.rules.projection import coming_charges
from billing.rules.schedule import cadence_of
from billing.rules.seats import priced_by_tiers, quantity_of, unit_amount_of
from billing.rules.state_words import state_words
from billing.rules.switch import usage_only

JSON = dict[str, Any]


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def customer_object(account: Account) -> JSON:
    """A customer: the billing account (its personal fields are null once it is closed)."""
    return {
        "object": "customer",
        "id": account.account_id,
        "email": account.Email or None,
        "name": account.Name,
        "language": account.Language,
        "created": account.CreatedDate,
        "closed": account.ClosedDate,
    }


def _card(sub: Subscription) -> JSON | None:
    details = sub.PaymentDetails
    if not details:
        return None
    return {"brand": details.Brand, "last4": details.Last4, "exp_month": _int(details.ExpMonth),
            "exp_year": _int(details.ExpYear), "wallet_card_id": details.CardId}


def _coupon_on(sub: Subscription) -> JSON | None:
    if not sub.CouponCode:
        return None
    return {"code": sub.CouponCode, "percent_off": _int(sub.CouponPercentOff),
            "amount_off": _int(sub.CouponAmountOff), "payments_left": _int(sub.CouponPaymentsLeft)}


def _english_day(value: date | None) -> str:
    return value.isoformat() if value else ""


def items_of(sub: Subscription, today: date) -> list[JSON]:
    """Stripe's items: the fixed price subscribed to (null ``PriceId``: the product's default
    one) at its quantity, its add-ons (``add_on``: true, one each, with the first payment
    that bills it, ``starts_on``, and once removed the last day paid, ``ends_on``), and each
    metered price whose usage each payment bills (a ``price`` and no ``quantity``, as
    Stripe's metered items; one removed says the last day whose usage it bills,
    ``ends_on``, one replacing it the first, ``starts_on``); a subscription to usage alone
    has only the metered ones."""
    fixed = [] if usage_only(sub) else [{"price": sub.PriceId or default_price_id(sub.SKU),
                                         "quantity": quantity_of(sub)}]
    add_ons = [{"price": add_on.price_id, "quantity": 1, "add_on": True, "amount": add_on.amount,
                "starts_on": add_on.first_day.isoformat(),
                **({"ends_on": add_on.last_day.isoformat()} if add_on.last_day else {})}
               for add_on in current_add_ons(sub, today)]
    ends, starts = sub.metered_ends, sub.metered_starts
    return [*fixed, *add_ons, *({"price": metered, **({"starts_on": starts[metered]} if metered in starts else {}),
                                 **({"ends_on": ends[metered]} if metered in ends else {})}
                                for metered in sub.metered_price_ids)]


def subscription_object(sub: Subscription, today: date) -> JSON:
    """A subscription, with its state as the pages name it and its next payment as the
    payment run will charge it (null when none is to come); its state on ``today``, the
    billing day."""
    state = state_of(sub, today)
    with override("en"):
        label = str(state_words(state, _english_day))
    coming = coming_charges(sub, 1)
    cadence = cadence_of(sub)
    next_payment = None
    if coming:
        charge = coming[0]
        next_payment = {
            "date": charge.date.isoformat(), "amount": charge.amount, "currency": sub.Currency,
            "list_price": charge.list_price, "discount": charge.discount,
            "period_start": charge.period_start.isoformat(), "period_end": charge.period_end.isoformat(),
            "kind": str(charge.kind), "coupon": charge.coupon,
        }
    return {
        "object": "subscription",
        "id": sub.sub_id,
        "customer": sub.account_id,
        "email": sub.Email,
        "product": sub.SKU,
        "product_name": sub.ProductName,
        "status": state.kind,
        "status_label": label,
        # The stored word (active, past_due, cancelled, incomplete, incomplete_expired): what
        # the batches go by; ``status`` is what a person is told.
        "stored_status": sub.Status,
        "amount": int(sub.PaymentAmount),
        # Seats (billing/rules/seats.py): ``amount`` = ``unit_amount`` x ``quantity``, plus
        # the add-ons the next payment bills (``items``); a price by tiers of seats has no
        # one price a seat (null): its price's tiers make it.
        "quantity": quantity_of(sub),
        "unit_amount": None if priced_by_tiers(sub) else unit_amount_of(sub),
        "items": items_of(sub, today),
        "currency": sub.Currency,
        "payment_day": int(sub.PaymentDay),
        # The cadence (docs/MONEY.md "Cadences"): ``amount`` is the price of one such period.
        "interval": str(cadence.interval),
        "interval_count": cadence.count,
        "next_payment": next_payment,
        "paid_through": sub.PaidThroughDate,
        "trial_end": sub.TrialEnd,
        "cancel_at_period_end": state.kind == "cancelling",
        "cancel_mode": sub.CancelMode,
        "cancelled": sub.CancelledDate,
        "cancel_reason": sub.CancelReason,
        "paused_from": sub.PausedFrom,
        "paused_until": sub.PausedUntil,
        "resumes": _iso(state.until) if state.kind == "paused" else None,
        "switch": ({"from_product": sub.PreviousSKU, "from_product_name": sub.PreviousProductName,
                    "effective": sub.SwitchFrom} if sub.SwitchFrom else None),
        "coupon": _coupon_on(sub),
        "card": _card(sub),
        "created": sub.CreatedDate,
        "version": _int(sub.Version),
    }


def refund_object(receipt: Receipt, refund: Refund) -> JSON:
    """One refund of a receipt's charge."""
    return {
        "object": "refund",
        "id": refund.RefundId,
        "receipt": receipt.url_id,
        "customer": receipt.account_id,
        "amount": int(refund.Amount),
        "currency": receipt.Currency,
        "created": refund.At,
        "reason": refund.Reason,
        "line": _int(refund.Line),  # the one invoice line it credits alone (tax.lines' index), or null
    }


def receipt_object(receipt: Receipt) -> JSON:
    """A receipt (the invoice of one charge): what was paid, for which days, and its refunds."""
    dispute = None
    if receipt.DisputeId:
        dispute = {"id": receipt.DisputeId, "status": receipt.DisputeStatus, "reason": receipt.DisputeReason,
                   "amount": _int(receipt.DisputeAmount), "opened": receipt.DisputeOpenedAt,
                   "closed": receipt.DisputeClosedAt}
    return {
        "object": "receipt",
        "id": receipt.url_id,
        "number": receipt.Number,
        "customer": receipt.account_id,
        "subscription": receipt.sub_id,
        "product": receipt.SKU,
        "product_name": receipt.ProductName,
        "kind": receipt.Kind or "period",
        "status": receipt.Status,
        "amount": int(receipt.ProcessedAmount),
        "price": receipt.price_amount,
        "discount": int(receipt.DiscountAmount or 0),
        "coupon": receipt.CouponCode,
        "amount_refunded": int(receipt.RefundedAmount or 0),
        "net_amount": receipt.net_amount,
        "currency": receipt.Currency,
        "billing_date": receipt.BillingDate,
        "period_start": receipt.PeriodStart,
        "period_end": receipt.PeriodEnd,
        "paid": receipt.ProcessedDate,
        "charge": receipt.ChargeId,
        "card": ({"brand": receipt.CardBrand, "last4": receipt.CardLast4} if receipt.CardLast4 else None),
        "refunds": [refund_object(receipt, refund) for refund in receipt.Refunds or []],
        "dispute": dispute,
        "tax": _invoice_tax(receipt),
    }


def _invoice_tax(receipt: Receipt) -> JSON | None:
    """The invoice's VAT as issued (docs/TAX.md); None on a receipt from before taxes."""
    if receipt.Net is None:
        return None
    return {
        "net": int(receipt.Net), "tax": int(receipt.Tax or 0), "rate": receipt.TaxRate,
        "country": receipt.TaxCountry, "treatment": receipt.TaxTreatment,
        "prices_include_tax": bool(receipt.PricesIncludeTax),
        "customer_country": receipt.BuyerCountry, "customer_vat_number": receipt.BuyerVatNumber,
        "lines": [_tax_line(line, receipt.Currency) for line in receipt.TaxLines or []],
    }


def _tax_line(line: TaxLineMap, currency: str) -> JSON:
    """An invoice line, in English words as the document words it (``invoice.line_of``):
    a usage tier's ("api_calls: 235 calls × $0.002") with its figures (``usage``: the
    tier's units, unit amount, flat amount, package size), ``usage`` null on any other line
    (an old receipt's one usage line included); a fixed fee of several seats' ("Team:
    $20.00 a seat × 5") with them (``seats``: the ``quantity`` and one seat's
    ``unit_amount``, null when priced by tiers, as Stripe's line's quantity and price),
    ``seats`` null on any other line (one seat's included)."""
    shown = line_of(line, currency)
    tier = shown.tier
    with override("en"):
        description = shown.description
    usage = None if tier is None else {
        "quantity": tier.part.units, "unit_amount_decimal": str(tier.part.unit_amount),
        "flat_amount": tier.part.flat_amount, "package_size": tier.part.package_size, "unit_label": tier.unit_label}
    seats = None if shown.seats is None else {"quantity": shown.seats.quantity, "unit_amount": shown.seats.unit_amount,
                                              "quantity_before": shown.seats.added_from}
    return {"description": description, "period_start": line.PeriodStart, "period_end": line.PeriodEnd,
            "net": int(line.Net), "rate": line.TaxRate, "tax": int(line.Tax), "gross": int(line.Gross),
            "usage": usage, "seats": seats}


def webhook_endpoint_object(endpoint: WebhookEndpoint) -> JSON:
    """A merchant's webhook endpoint, never its secret (shown once, when it is made)."""
    return {
        "object": "webhook_endpoint",
        "id": endpoint.EndpointId,
        "url": endpoint.Url,
        "description": endpoint.Description,
        "event_types": list(endpoint.EventTypes) if endpoint.EventTypes else None,  # None: every type
        "status": endpoint.Status,
        "created": endpoint.CreatedAt,
        "disabled_reason": endpoint.DisabledReason,
    }


def product_object(product: Product) -> JSON:
    """A product of the catalog (its monthly price)."""
    return {
        "object": "product",
        "id": product.SKU,
        "name": product.Name,
        "description": product.Description,
        "amount": int(product.PaymentAmount),
        "currency": product.Currency,
        "status": product.Status,
        "trial_days": product.trial_days,
        "add_on": product.sold_as_add_on,
        "created": product.CreatedDate,
    }


def coupon_status(coupon: Coupon, day: date) -> str:
    """``active`` when the coupon may be given on ``day`` (by the rule giving it checks,
    ``rules.coupons.refusal``: the price's currency aside), else why not: ``ended``,
    ``not_yet``, ``expired``, ``used_up``. The stored ``Status`` alone says ``active`` past
    the coupon's last valid day."""
    why = refusal(active=coupon.Status == CouponStatus.ACTIVE, valid_from=coupon.ValidFrom,
                  valid_until=coupon.ValidUntil, uses=int(coupon.Uses or 0), max_uses=_int(coupon.MaxUses),
                  amount_currency=None, currency="", day=day)
    return "active" if why is None else str(why)


def coupon_object(coupon: Coupon, today: date) -> JSON:
    """A coupon code; its ``status`` on ``today`` (the billing day), ``stored_status`` the stored word."""
    return {
        "object": "coupon",
        "id": coupon.Code,
        "code": coupon.Code,
        "percent_off": _int(coupon.PercentOff),
        "amount_off": _int(coupon.AmountOff),
        "currency": coupon.Currency,
        "duration": coupon.Duration,
        "duration_payments": _int(coupon.DurationPayments),
        "max_uses": _int(coupon.MaxUses),
        "uses": int(coupon.Uses or 0),
        "valid_from": coupon.ValidFrom,
        "valid_until": coupon.ValidUntil,
        "status": coupon_status(coupon, today),
        "stored_status": coupon.Status,
        "created": coupon.CreatedDate,
    }


def dispute_object(entry: DisputeEntry) -> JSON:
    """A dispute (chargeback) of a receipt's charge, as the processor reported it."""
    return {
        "object": "dispute",
        "id": entry.DisputeId,
        "customer": entry.AccountId,
        "receipt": entry.ReceiptNumber or entry.ReceiptSK,
        "charge": entry.ChargeId,
        "amount": int(entry.Amount),
        "currency": entry.Currency,
        "reason": entry.Reason,
        "status": entry.Status,
        "closed": entry.closed,
        "opened": entry.OpenedAt,
        "closed_at": entry.ClosedAt,
        "updated": entry.UpdatedAt,
    }


def event_object(event: MerchantEvent) -> JSON:
    """A merchant's event (the outbox): its id, type and time, and the object it reports as
    it was then (``data``, one of the objects above or a payment attempt). The webhooks
    post it; ``GET /api/v1/events`` lists it."""
    return {
        "object": "event",
        "id": event.EventId,
        "type": event.Type,
        "created": event.CreatedAt,
        "customer": event.AccountId,
        "data": event.Data,
    }
