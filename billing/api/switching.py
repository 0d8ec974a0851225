"""A switch's amounts before it is made: ``GET /subscriptions/{id}/switch_preview?price=``
(or ``?product=<SKU>``), as Stripe's upcoming invoice previews a change of price. Any
live key may call it.

What it shows is what ``POST /subscriptions/{id}/switch`` charges: the quote the switch
itself charges by (``actions.switch.quote``), its amount due with the tax as charged
(``actions.switch.charged_now``) and its refund with the tax as refunded
(``actions.switch.refunded_now``); the next payment is ``payments.next_charge`` (the
function the payment run charges by) of the subscription as the switch leaves it. Pass
``amount_due`` back as the switch's ``expected_amount_due``: a different amount then is a
409, nothing charged (docs/MONEY.md "Switching price or cadence")."""

# No ``from __future__ import annotations``: ninja reads the routes' annotations as types.
from django.http import HttpRequest, JsonResponse
from django.utils import translation
from ninja import Router, Schema

from billing.actions import switch as switch_actions
from billing.api.auth import read_key
from billing.api.errors import ApiError
from billing.api.reads import ERRORS, subscription_or_404
from billing.api.schemas import KeyId
from billing.api.writes import switch_choice
from billing.operations.payments import next_charge
from billing.rules.schedule import cadence_of
from billing.rules.switch import SwitchRefused
from core.pages import today

router = Router(auth=read_key, tags=["reads"])


class SwitchPreviewOut(Schema):
    object: str
    subscription: str
    price: str
    product: str
    currency: str
    amount: int
    interval: str
    interval_count: int
    applies: str
    effective_date: str
    amount_due: int
    proration_charge: int
    proration_credit: int
    refund: int
    period_start: str | None
    period_end: str | None
    next_payment_date: str | None
    next_payment_amount: int | None


@router.get("/subscriptions/{subscription_id}/switch_preview", response={200: SwitchPreviewOut, **ERRORS},
            summary="What switching to a price would charge")
def switch_preview(request: HttpRequest, subscription_id: KeyId, price: str | None = None,
                   product: str | None = None) -> JsonResponse:
    """``applies``: ``now`` (``amount_due`` charged now: the new price's days, or its first
    whole period when the interval is longer, ``proration_charge``, less
    ``proration_credit`` for the unused days already paid; ``refund`` when the credit is
    larger) or ``period_end`` (nothing now; from ``effective_date``, the next payment). A
    409 ``invalid_state`` says why a switch cannot be made (as the switch's own)."""
    if price is not None and len(price) > 120 or product is not None and len(product) > 40:
        raise ApiError(400, "No such price.", param="price")
    choice = switch_choice(price, product)
    sub = subscription_or_404(subscription_id)
    day = today()
    with translation.override("en"):
        try:
            q = switch_actions.quote(sub, choice, today=day)
        except SwitchRefused as refused:
            raise ApiError(409, str(refused), type="invalid_state") from None
    after = switch_actions.as_switched(sub, q)
    cadence = q.new_cadence or cadence_of(sub)
    coming = next_charge(after) if after.NextPaymentDate else None
    return JsonResponse({
        "object": "switch_preview", "subscription": sub.sub_id, "price": q.new_price_id, "product": q.new_sku,
        "currency": sub.Currency, "amount": q.new_price, "interval": str(cadence.interval),
        "interval_count": cadence.count, "applies": "now" if q.upgrade else "period_end",
        "effective_date": q.effective.isoformat(), "amount_due": switch_actions.charged_now(sub, q),
        "proration_charge": q.charge, "proration_credit": q.credit, "refund": switch_actions.refunded_now(sub, q),
        "period_start": q.effective.isoformat() if q.upgrade and q.charge else None,
        "period_end": q.charged_through.isoformat() if q.upgrade and q.charge and q.charged_through else None,
        "next_payment_date": coming.date.isoformat() if coming else None,
        "next_payment_amount": coming.amount if coming else None,
    })
