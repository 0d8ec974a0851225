"""A subscription's next payment, before it is taken: ``GET /subscriptions/{id}/upcoming``
(Stripe's upcoming invoice). Any live key may call it.

What it shows is what the payment run charges: the one function the run charges by,
``billing.operations.payments.next_charge`` (its days, the coupon's discount, the tax),
so an estimate and its charge never differ (docs/API.md "The upcoming payment")."""

# No ``from __future__ import annotations``: ninja reads the routes' annotations as types.
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from ninja import Router, Schema
from pydantic import Field

from billing import access
from billing.api.auth import read_key
from billing.api.errors import ApiError
from billing.api.reads import ERRORS, subscription_or_404
from billing.api.schemas import KeyId
from billing.models import SubscriptionStatus
from billing.operations.charge_lines import upcoming_object
from billing.operations.final_usage import last_usage_charge
from billing.operations.payments import next_charge
from core.clock import billing_today

router = Router(auth=read_key, tags=["reads"])


class UpcomingLineOut(Schema):
    description: str
    price: str | None
    meter: str | None
    quantity: int
    amount: int
    tax: int
    # a usage tier's line (null on the fixed fee's): how its amount is priced
    unit_amount_decimal: str | None = Field(None, description="a usage tier's unit amount, minor units (a decimal)")
    flat_amount: int | None = Field(None, description="a usage tier's flat amount, minor units")
    package_size: int | None = Field(None, description="a package price's units per package")


class UpcomingOut(Schema):
    object: str
    subscription: str
    amount_due: int
    currency: str
    date: str
    period_start: str
    period_end: str
    lines: list[UpcomingLineOut]


@router.get("/subscriptions/{subscription_id}/upcoming", response={200: UpcomingOut, **ERRORS},
            summary="A subscription's next payment")
def upcoming(request: HttpRequest, subscription_id: KeyId) -> JsonResponse:
    """What the next payment will charge, on which day, line by line: each line's
    ``amount`` before its ``tax``; ``amount_due`` is their sum, what is charged. A 404
    for an unknown subscription, and for one with no payment to come (cancelled, or
    paused with no end). One cancelled at its period's end with a metered price shows its
    last usage charge, made the day after its last day (its usage's lines only: no fee).
    Two GetItems for the key, the id's look-up and the subscription's Query, and the
    seller's tax profile (then the price's, the meter's and the usage's, for the usage)."""
    sub = subscription_or_404(subscription_id)
    if not sub.NextPaymentDate or not (sub.is_live or sub.Status == SubscriptionStatus.INCOMPLETE):
        # cancelled at its period's end with a metered price: its last usage is still charged
        last = last_usage_charge(sub, billing_today(settings.BILLING_TIMEZONE))
        if last is None:
            raise ApiError(404, f"Subscription {subscription_id} has no payment to come.", param="subscription_id")
        return JsonResponse(upcoming_object(sub, last, access.tax_terms(sub)))
    tax = access.tax_terms(sub)  # the seller's profile: read once a request
    charge = next_charge(sub, seller=tax.seller)
    return JsonResponse(upcoming_object(sub, charge, tax))
