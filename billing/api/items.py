"""A live subscription's metered items (Stripe's ``/v1/subscription_items``).

``POST /subscriptions/{id}/items`` ``{"price": <metered price id>}``: from its next payment
on the subscription also bills that price's usage of the period just ended, beside the
others' (docs/USAGE.md "Several metered prices"). Nothing is charged now: usage is billed
in arrears. A price the subscription bills already answers the subscription unchanged; one
being removed is kept.

``DELETE /subscriptions/{id}/items/{price_id}``: the item leaves at the period's end
(``?at=now``: today), its usage through the last day paid for (today) billed by the next
payment (docs/USAGE.md "Removing a metered price"); the item says so (``ends_on``) until
then.

``POST /subscriptions/{id}/items/{price_id}`` ``{"price": <a price of the same meter>}``:
the item's price changes at the period's end, or now (``"at": "now"``) (docs/USAGE.md
"Changing a metered price").

Each honours ``Idempotency-Key`` as every write (billing/api/writes.py)."""

# No ``from __future__ import annotations``: ninja reads the routes' annotations as types.
from collections.abc import Callable
from typing import Annotated, Literal

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router
from pydantic import Field

from billing.access.usage_billing import NotMetered
from billing.actions import meters as meter_actions
from billing.api.auth import actor_of, write_key
from billing.api.errors import ApiError
from billing.api.idempotency import idempotent
from billing.api.reads import subscription_or_404
from billing.api.schemas import PRINTABLE, Body, KeyId, SubscriptionOut
from billing.api.writes import IDEMPOTENCY_DOC, WRITE_ERRORS, refusals, shown
from billing.models import Subscription

router = Router(tags=["subscriptions"])


class ItemIn(Body):
    price: Annotated[str, Field(min_length=1, max_length=200, pattern=PRINTABLE,
                                description="A metered price: its usage is billed with each payment")]


class ItemPriceIn(ItemIn):
    at: Literal["period_end", "now"] = Field("period_end", description=(
        "period_end: the new price bills from the day after the last day paid for; now: from tomorrow"))


def _live(subscription_id: str, price_id: str | None = None) -> Subscription:
    """The subscription, live (else a 409) and, when ``price_id`` is named, billing it
    (else a 404 naming ``price_id``)."""
    sub = subscription_or_404(subscription_id)
    if not sub.is_live:
        raise ApiError(409, "The subscription has ended: it bills nothing more.", type="invalid_state")
    if price_id is not None and price_id not in sub.metered_price_ids:
        raise ApiError(404, f"The subscription has no metered item of price {price_id}.", param="price_id")
    return sub


def _written(write: Callable[[], Subscription], param: str) -> JsonResponse:
    """The subscription as ``write`` leaves it; its refusal a 400 naming ``param``."""
    with refusals():
        try:
            sub = write()
        except NotMetered as refused:
            raise ApiError(400, f"{param}: {refused}.", param=param) from None
    return shown(sub)


@router.post("/subscriptions/{subscription_id}/items", response={200: SubscriptionOut, **WRITE_ERRORS},
             summary="Add a metered price to a subscription", auth=write_key, tags=["writes"],
             openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def add_item(request: HttpRequest, subscription_id: KeyId, body: ItemIn) -> JsonResponse:
    """The metered price joins the subscription's items: its usage is billed in arrears with
    each payment from the next on. A price that is not metered, in another currency or of
    another interval, of a meter the subscription bills already, or a sixth metered price,
    is a 400 naming ``price``; a subscription that has ended, a 409."""
    sub = _live(subscription_id)
    return _written(lambda: meter_actions.attach_metered_price(sub, body.price, actor=actor_of(request)), "price")


@router.post("/subscriptions/{subscription_id}/items/{price_id}", response={200: SubscriptionOut, **WRITE_ERRORS},
             summary="Change a metered price of a subscription at its period's end", auth=write_key,
             tags=["writes"], openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def replace_item(request: HttpRequest, subscription_id: KeyId, price_id: KeyId, body: ItemPriceIn) -> JsonResponse:
    """Stripe's update of a subscription item's price: ``price``, an active price of the same
    meter (its currency and interval), replaces the item at the end of the period paid for
    (or today, ``at=now``). The next payment bills the meter's usage through that day at the
    item's price (from the day after at the new one, when changed now), the payments after
    it at the new one; until then the items say when each ``ends_on`` and ``starts_on``. A price the subscription does not bill is a 404; a new price of another
    meter, not metered, in another currency or interval, or billed already, a 400 naming
    ``price``; a subscription that has ended, a 409."""
    sub = _live(subscription_id, price_id)
    return _written(lambda: meter_actions.replace_metered_price(sub, price_id, body.price, actor=actor_of(request),
                                                                now=body.at == "now"), "price")


@router.delete("/subscriptions/{subscription_id}/items/{price_id}", response={200: SubscriptionOut, **WRITE_ERRORS},
               summary="Remove a metered price from a subscription at its period's end", auth=write_key,
               tags=["writes"], openapi_extra=IDEMPOTENCY_DOC)
@idempotent
def remove_item(request: HttpRequest, subscription_id: KeyId, price_id: KeyId,
                at: Literal["period_end", "now"] = Query("period_end", description=(
                    "period_end: its usage through the last day paid for is billed; now: through today"))) \
        -> JsonResponse:
    """The metered item leaves the subscription at the end of the period paid for (``at``
    ``period_end``), or now (``at=now``: today's usage is the last billed, as Stripe bills
    a deleted item's usage up to its removal): the next payment bills its usage through
    that day, with the other items, and no payment after it; until then it can be kept
    (``POST`` it again). A price the subscription does not bill is a 404; the price a
    subscription to usage alone is to, a 400 (switch or cancel it); a subscription that
    has ended, a 409. One being removed already answers the subscription unchanged."""
    sub = _live(subscription_id, price_id)
    return _written(lambda: meter_actions.remove_metered_price(sub, price_id, actor=actor_of(request), now=at == "now"),
                    "price_id")
