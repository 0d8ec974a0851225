"""A subscription's add-ons (billing/rules/add_ons.py, docs/PRICING.md "Add-ons"): further
fixed prices billed with the plan's fee, each from the next payment.

``POST /subscriptions/{id}/add_ons`` ``{"price": "price_..."}`` adds one;
``POST /subscriptions/{id}/add_ons/{price_id}/remove`` removes one (kept, paid for, until the
next payment). Nothing is charged or refunded now: both answer the subscription, whose
``amount`` is the next payment's fee and whose ``items`` list the add-ons (``add_on``:
true, ``starts_on``, and ``ends_on`` once removed). A refusal is a 409 ``invalid_state``
in the portal's words; both honour ``Idempotency-Key`` as every write does
(billing/api/writes.py)."""

# No ``from __future__ import annotations``: ninja reads the routes' annotations as types.
from django.http import HttpRequest, JsonResponse
from ninja import Router
from pydantic import Field

from billing.actions import add_ons as add_on_actions
from billing.api.auth import actor_of, write_key
from billing.api.idempotency import idempotent
from billing.api.reads import subscription_or_404
from billing.api.schemas import Body, KeyId, SubscriptionOut
from billing.api.writes import IDEMPOTENCY_DOC, WRITE_ERRORS, refusals, shown
from core.pages import today

router = Router(tags=["add-ons"])


class AddOnIn(Body):
    price: str = Field(max_length=120, description=(
        "the price to add: an active fixed price of another product, in the subscription's currency and on its "
        "interval, for one"))


@router.post("/subscriptions/{subscription_id}/add_ons", response={200: SubscriptionOut, **WRITE_ERRORS},
             summary="Add an add-on from the next payment", auth=write_key, tags=["writes"],
             openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def add_add_on(request: HttpRequest, subscription_id: KeyId, body: AddOnIn) -> JsonResponse:
    """The add-on is billed by every payment from the next one on, on a line of its own of
    the same charge and invoice; nothing is charged now."""
    sub = subscription_or_404(subscription_id)
    with refusals():
        add_on_actions.add(sub, body.price, today=today(), actor=actor_of(request))
    return shown(sub)


@router.post("/subscriptions/{subscription_id}/add_ons/{price_id}/remove",
             response={200: SubscriptionOut, **WRITE_ERRORS}, summary="Remove an add-on from the next payment",
             auth=write_key, tags=["writes"], openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def remove_add_on(request: HttpRequest, subscription_id: KeyId, price_id: KeyId) -> JsonResponse:
    """The add-on stays until the next payment (paid for) and no payment after it bills
    it; one not billed yet is gone at once. Nothing is refunded."""
    sub = subscription_or_404(subscription_id)
    with refusals():
        add_on_actions.remove(sub, price_id, today=today(), actor=actor_of(request))
    return shown(sub)
