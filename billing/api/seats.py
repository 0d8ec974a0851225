"""A subscription's quantity (seats): changed by a write key as in the portal, prorated
by the same rules (docs/MONEY.md M7).

``POST /subscriptions/{id}/quantity`` ``{"quantity": N}``: more seats are charged now for
the days already paid (off-session: a bank that asks the customer to confirm refuses it
here), fewer seats credit theirs to the card. Honours ``Idempotency-Key`` as every write
does (billing/api/writes.py): a retry with the same key replays the first answer, and the
charge's own key (the subscription's version) makes a retry without one charge nothing
more (the quantity is then already N: a 409)."""

# No ``from __future__ import annotations``: ninja reads the routes' annotations as types.
from typing import Annotated

from django.http import HttpRequest, JsonResponse
from ninja import Router
from pydantic import BeforeValidator, Field

from billing.actions import seats as seat_actions
from billing.api.auth import actor_of, write_key
from billing.api.errors import ApiError
from billing.api.idempotency import idempotent
from billing.api.reads import subscription_or_404
from billing.api.schemas import MAX_WHOLE, Body, KeyId, SubscriptionOut
from billing.api.writes import IDEMPOTENCY_DOC, WRITE_ERRORS, refusals, shown
from billing.rules.seats import QuantityOutOfBounds, check_quantity
from core.pages import today

router = Router(tags=["seats"])


def _whole(value: object) -> object:
    """A boolean is no quantity (pydantic would take ``true`` for 1)."""
    if isinstance(value, bool):
        raise ValueError("a whole number, not true or false")
    return value


class QuantityIn(Body):
    # Strict: "3" and 3.5 (and 3.0) are refused, not rounded or parsed.
    # Bounded as every number the API takes (``MAX_WHOLE``: DynamoDB stores it); the seats'
    # own bounds (the price's, else 1..10,000) are the rules' check, in the route.
    quantity: Annotated[int, Field(strict=True, ge=0, le=MAX_WHOLE, description="the number of seats"),
                        BeforeValidator(_whole)]


@router.post("/subscriptions/{subscription_id}/quantity", response={200: SubscriptionOut, **WRITE_ERRORS},
             summary="Change the number of seats", auth=write_key, tags=["writes"], openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def change_quantity(request: HttpRequest, subscription_id: KeyId, body: QuantityIn) -> JsonResponse:
    """More seats are charged now for the days already paid (their share of the period,
    prorated by day); fewer seats are credited to the card the same way. The next payments
    charge the new whole price (``amount`` = ``unit_amount`` x ``quantity``). The bounds are
    the subscription's price's (else 1 to 10,000)."""
    sub = subscription_or_404(subscription_id)
    try:
        check_quantity(body.quantity, seat_actions.bounds_of(sub))
    except QuantityOutOfBounds as refused:
        raise ApiError(400, f"quantity: must be from {refused.low} to {refused.high}.", param="quantity") from None
    with refusals():
        try:
            done = seat_actions.change_quantity(sub, body.quantity, actor_of(request), today=today())
        except seat_actions.SeatsDeclined as declined:
            raise ApiError(409, f"The card was declined ({declined}): the seats are unchanged.",
                           type="card_error") from None
    return shown(done.sub)
