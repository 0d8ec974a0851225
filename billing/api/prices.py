"""A product's prices (docs/PRICING.md, docs/API.md "Prices"): listed per product and read
by id with any key; added and archived by a write key with an ``Idempotency-Key``, as the
other writes (billing/api/writes.py). The objects are Stripe's: ``recurring`` nests the
interval, ``tiers`` and ``tiers_mode`` a tiered price, ``transform_quantity`` a package.
A price's amounts never change: archive it and add another. ``POST /subscriptions``
subscribes a customer to one (Stripe's ``items: [{price, quantity}]``: one fixed price,
its add-ons and its metered prices)."""


from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from django.http import HttpRequest, JsonResponse
from django.utils import translation
from ninja import Router
from pydantic import BeforeValidator, Field

from billing import access
from billing.actions import add_ons as add_on_actions
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscription_actions
from billing.api.auth import actor_of, read_key, write_key
from billing.api.errors import ApiError, found
from billing.api.idempotency import idempotent
from billing.api.reads import ERRORS
from billing.api.schemas import PRINTABLE, Body, KeyId, ListOut, Out, SubscriptionOut, whole_number
from billing.api.writes import IDEMPOTENCY_DOC, WRITE_ERRORS, refusals, shown
from billing.models import Card, Product, ProductStatus
from billing.rules.add_ons import MAX_ADD_ONS, AddOn, AddOnRefused, check_offer
from billing.rules.price_choice import TAXED_OTHERWISE, PriceRefused, bills_with, choose_offer, taxed_alike
from billing.rules.price_objects import price_object
from billing.rules.pricing import MAX_INTERVAL_COUNT, BillingScheme, Interval, PriceTerms, Tier, TiersMode
from billing.rules.tax import TaxBehavior, tax_behavior_word
from billing.rules.usage_metadata import MAX_METERED_PRICES
from core.money import is_payable_currency
from core.pages import today
from core.payments.gateway import CardToken

router = Router(tags=["prices"])

# A unit amount in minor units with up to 12 decimal places (Stripe's unit_amount_decimal).
DECIMAL_TEXT = r"^[0-9]{1,12}(\.[0-9]{1,12})?$"
MAX_TIERS = 20  # Stripe's own limit of a price's tiers


def _inf_is_none(value: object) -> object:
    # Stripe's "inf" for the last tier's end: no end.
    return None if value == "inf" else value


# One nullable whole number (not a union with "inf": an error then names the field alone).
UpTo = Annotated[whole_number(1) | None, BeforeValidator(_inf_is_none)]


class PriceOut(Out):
    product: str
    currency: str
    active: bool


class PriceTierIn(Body):
    up_to: UpTo = Field(description='the last unit of the tier; "inf" (or null) for the last tier')
    unit_amount: whole_number(0) | None = None
    unit_amount_decimal: str | None = Field(None, pattern=DECIMAL_TEXT, max_length=25)
    flat_amount: whole_number(0) = 0


class PriceRecurringIn(Body):
    interval: Interval
    interval_count: whole_number(1, max(MAX_INTERVAL_COUNT.values())) = 1
    meter: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$",
                              description="a metered price: its meter's event name")
    trial_period_days: whole_number(0, 365) | None = None


class PriceTransformQuantityIn(Body):
    divide_by: whole_number(2)
    round: Literal["up"] = "up"


class PriceQuantityIn(Body):
    minimum: whole_number(0, 10**9) | None = None
    maximum: whole_number(1, 10**9) | None = None


class PriceIn(Body):
    product: str = Field(min_length=2, max_length=40, pattern=r"^[A-Z0-9-]+$", description="the product's SKU")
    currency: str = Field(min_length=3, max_length=3)
    recurring: PriceRecurringIn
    billing_scheme: BillingScheme = BillingScheme.PER_UNIT
    unit_amount: whole_number(0) | None = Field(None, description="minor units")
    unit_amount_decimal: str | None = Field(None, pattern=DECIMAL_TEXT, max_length=25,
                                            description='minor units with up to 12 decimals: "0.2" is a fifth of a cent')
    tiers_mode: TiersMode | None = None
    tiers: list[PriceTierIn] | None = Field(None, max_length=MAX_TIERS)
    transform_quantity: PriceTransformQuantityIn | None = None
    quantity: PriceQuantityIn | None = None
    unit_label: str | None = Field(None, max_length=40, pattern=r"^[^\x00-\x1f\x7f]*$")
    tax_behavior: TaxBehavior = Field(TaxBehavior.UNSPECIFIED,
                                      description="the amounts include the tax (inclusive), have it added "
                                                  "(exclusive), or as the seller's profile says (unspecified)")
    nickname: str = Field("", max_length=100, pattern=r"^[^\x00-\x1f\x7f]*$")


def _one_amount(whole: int | None, text: str | None, param: str) -> Decimal | None:
    """``unit_amount`` or ``unit_amount_decimal``, not both (Stripe's rule)."""
    if whole is not None and text is not None:
        raise ApiError(400, f"Give {param} or {param}_decimal, not both.", param=f"{param}_decimal")
    if text is not None:
        return Decimal(text)
    return None if whole is None else Decimal(whole)


def _tiers(body: PriceIn) -> tuple[Tier, ...]:
    tiers: list[Tier] = []
    for position, given in enumerate(body.tiers or ()):
        param = f"tiers.{position}"
        unit = _one_amount(given.unit_amount, given.unit_amount_decimal, f"{param}.unit_amount")
        try:
            tiers.append(Tier(given.up_to,
                              Decimal(0) if unit is None else unit, given.flat_amount))
        except ValueError as refused:
            raise ApiError(400, f"{param}: {refused}.", param=param) from None
    return tuple(tiers)


def _terms(body: PriceIn) -> PriceTerms:
    """The body's model, each refusal naming its field."""
    currency = body.currency.upper()
    if not is_payable_currency(currency):
        raise ApiError(400, f"{currency} is not an ISO 4217 currency that can be paid in.", param="currency")
    recurring = body.recurring
    if recurring.interval_count > MAX_INTERVAL_COUNT[recurring.interval]:
        raise ApiError(400, f"A price is billed at most every three years: interval_count is at most "
                            f"{MAX_INTERVAL_COUNT[recurring.interval]} for {recurring.interval}.",
                       param="recurring.interval_count")
    unit = _one_amount(body.unit_amount, body.unit_amount_decimal, "unit_amount")
    if body.billing_scheme == BillingScheme.PER_UNIT:
        if unit is None:
            raise ApiError(400, "A per_unit price needs unit_amount or unit_amount_decimal.", param="unit_amount")
        for name in ("tiers", "tiers_mode"):
            if getattr(body, name) is not None:
                raise ApiError(400, f"{name} belongs to a tiered price (billing_scheme=tiered).", param=name)
    else:
        if unit is not None:
            raise ApiError(400, "A tiered price has its amounts in its tiers.", param="unit_amount")
        if body.transform_quantity is not None:
            raise ApiError(400, "transform_quantity belongs to a per_unit price.", param="transform_quantity")
        if body.tiers_mode is None:
            raise ApiError(400, "A tiered price needs tiers_mode: graduated or volume.", param="tiers_mode")
        if not body.tiers:
            raise ApiError(400, "A tiered price needs its tiers.", param="tiers")
    tiers = _tiers(body)
    try:
        return PriceTerms(currency, body.billing_scheme, unit_amount=unit, tiers_mode=body.tiers_mode, tiers=tiers,
                          package_size=body.transform_quantity.divide_by if body.transform_quantity else None,
                          interval=recurring.interval, interval_count=recurring.interval_count)
    except ValueError as refused:
        # What is left is the tiers' order, or an amount past the limits.
        param = "tiers" if body.billing_scheme == BillingScheme.TIERED else "unit_amount"
        raise ApiError(400, f"{str(refused)[:1].upper()}{str(refused)[1:]}.", param=param) from None


def price_or_404(price_id: str):
    return found(access.get_price(price_id), "price", "price_id")


@router.get("/products/{product_id}/prices", response={200: ListOut, **ERRORS}, auth=read_key,
            summary="A product's prices")
def list_prices(request: HttpRequest, product_id: KeyId, include_archived: bool = False) -> JsonResponse:
    """Its prices, oldest first: a product made before prices has its default one
    (``price_default_<SKU>``: monthly, its amount). One Query and one GetItem; a product
    has a handful of prices, so one page."""
    product = found(access.get_product(product_id), "product", "product_id")
    prices = access.list_prices(product.SKU, include_archived=include_archived, product=product)
    return JsonResponse({"object": "list", "data": [price_object(p) for p in prices], "has_more": False,
                         "next_cursor": None})


@router.get("/prices/{price_id}", response={200: PriceOut, **ERRORS}, auth=read_key, summary="A price")
def get_price(request: HttpRequest, price_id: KeyId) -> JsonResponse:
    return JsonResponse(price_object(price_or_404(price_id)))


@router.post("/prices", response={201: PriceOut, **WRITE_ERRORS}, auth=write_key, tags=["writes"],
             openapi_extra=IDEMPOTENCY_DOC, summary="Add a price to a product")
@idempotent
def create_price(request: HttpRequest, body: PriceIn) -> JsonResponse:
    terms = _terms(body)
    quantity = body.quantity or PriceQuantityIn()
    if quantity.minimum is not None and quantity.maximum is not None and quantity.maximum < quantity.minimum:
        raise ApiError(400, "quantity.maximum is below quantity.minimum.", param="quantity.maximum")
    try:
        price = price_actions.add_price(
            body.product, terms, actor=actor_of(request), nickname=body.nickname, unit_label=body.unit_label,
            trial_days=body.recurring.trial_period_days, min_quantity=quantity.minimum,
            max_quantity=quantity.maximum, meter=body.recurring.meter, tax_behavior=body.tax_behavior)
    except access.NoSuchProduct:
        raise ApiError(400, f"No such product: {body.product}.", param="product") from None
    return JsonResponse(price_object(price), status=201)


@router.post("/prices/{price_id}/archive", response={200: PriceOut, **WRITE_ERRORS}, auth=write_key,
             tags=["writes"], openapi_extra=IDEMPOTENCY_DOC, summary="Archive a price")
@idempotent
def archive_price(request: HttpRequest, price_id: KeyId) -> JsonResponse:
    """New subscriptions no longer take it; its amounts stay as they were (Stripe's
    ``active: false``)."""
    price = price_or_404(price_id)
    try:
        price = price_actions.archive_price(price, actor=actor_of(request))
    except access.DefaultPriceFixed:
        raise ApiError(409, "A product's default price follows the product: retire the product instead.",
                       type="invalid_state") from None
    except access.ConditionFailed:
        raise ApiError(409, "This price is archived already.", type="invalid_state") from None
    return JsonResponse(price_object(price))


# --- subscribing to a price -----------------------------------------------------------------


class SubscriptionItemIn(Body):
    price: Annotated[str, Field(min_length=1, max_length=200, pattern=PRINTABLE)]
    quantity: whole_number(1) | None = None


class SubscribeIn(Body):
    """Stripe's ``items: [{price, quantity}]`` (a fixed price, up to ``MAX_ADD_ONS`` further
    fixed ones, its add-ons, and up to ``MAX_METERED_PRICES`` metered ones), or ``price``
    and ``quantity``."""

    customer: KeyId
    # The fixed price's item, its add-ons' and its metered prices' (a price and no quantity).
    items: Annotated[list[SubscriptionItemIn],
                     Field(min_length=1, max_length=1 + MAX_ADD_ONS + MAX_METERED_PRICES)] | None = None
    price: Annotated[str, Field(min_length=1, max_length=200, pattern=PRINTABLE)] | None = None
    quantity: whole_number(1) | None = None
    payment_day: whole_number(1, 31) | None = None


def _metered_items(body: SubscribeIn) -> tuple[list[tuple[Any, str]], list[tuple[Any, str]]]:
    """The items' metered prices (Stripe's shape: a ``price`` and no ``quantity``) and the
    fixed prices after the first (its add-ons: billing/rules/add_ons.py), each with its
    field's prefix, taken out of ``body.items``, in order (the first fixed one stays: the
    plan). Two of one meter (each event billed twice), or more than ``MAX_METERED_PRICES``,
    is a 400."""
    metered: list[tuple[Any, str]] = []
    fixed = []
    add_ons: list[tuple[Any, str]] = []
    if body.items is not None and (body.price is not None or body.quantity is not None):
        raise ApiError(400, "Give items, or price and quantity, not both.", param="items")
    for n, item in enumerate(body.items or []):
        price = access.get_price(item.price)
        if price is not None and price.Meter:
            if item.quantity is not None:
                raise ApiError(400, "A metered price's item has no quantity: its usage is billed.",
                               param=f"items[{n}].quantity")
            metered.append((price, f"items[{n}]."))
        elif fixed:
            add_ons.append((item, f"items[{n}]."))
        else:
            fixed.append(item)
    if len(metered) > MAX_METERED_PRICES:
        raise ApiError(400, f"A subscription bills {MAX_METERED_PRICES} metered prices at most.",
                       param=f"{metered[MAX_METERED_PRICES][1]}price")
    for n, (price, prefix) in enumerate(metered):
        if any(other.Meter == price.Meter for other, _ in metered[:n]):
            raise ApiError(400, f"Two metered prices of the meter {price.Meter}: each event would be billed twice.",
                           param=f"{prefix}price")
    body.items = fixed or (None if metered else body.items)
    return metered, add_ons


def _add_ons(items: list[tuple[Any, str]], choice: Any, product: Product) -> tuple[AddOn, ...]:
    """The add-on items as add-ons of the plan ``choice`` (of ``product``): each an active
    fixed price of another product, for one, in its currency, cadence and tax behaviour
    (``add_ons.check_offer``'s rules, as adding one to a running subscription); a 400
    naming the item's field otherwise. Billed from the first charge on."""
    chosen: list[AddOn] = []
    for item, prefix in items:
        if item.quantity not in (None, 1):
            raise ApiError(400, "An add-on is for one: its item's quantity is 1.", param=f"{prefix}quantity")
        price = access.get_price(item.price)
        product_of = access.get_product(price.SKU) if price is not None else None
        if price is None or product_of is None or product_of.Status != ProductStatus.ACTIVE:
            raise ApiError(404, f"No such price: {item.price}.", param=f"{prefix}price")
        with translation.override("en"):
            try:
                if not taxed_alike(price, choice.tax_behavior):
                    raise AddOnRefused(TAXED_OTHERWISE)
                offer = add_on_actions.offer_of(price, product_of)
                check_offer(offer, sku=product.SKU, currency=choice.currency, interval=choice.interval,
                            interval_count=choice.interval_count, billed=chosen)
            except AddOnRefused as refused:
                raise ApiError(400, str(refused), param=f"{prefix}price") from None
        chosen.append(AddOn(offer.price_id, offer.name, offer.amount, date.min))  # its first day: the first charge's
    return tuple(chosen)


def _price_and_quantity(body: SubscribeIn) -> tuple[str, int | None, str]:
    """The price asked for, its quantity and the field that named it (``items[0].price``
    or ``price``)."""
    if body.items is not None:
        if body.price is not None or body.quantity is not None:
            raise ApiError(400, "Give items, or price and quantity, not both.", param="items")
        return body.items[0].price, body.items[0].quantity, "items[0]."
    if body.price is None:
        raise ApiError(400, "Name the price to subscribe to (price, or items: [{price, quantity}]).", param="price")
    return body.price, body.quantity, ""


def card_token(card: Card) -> CardToken:
    d = card.Details
    return CardToken(token=d.Token, brand=d.Brand, last4=d.Last4, exp_month=d.ExpMonth, exp_year=d.ExpYear,
                     country=d.Country)


@router.post("/subscriptions", response={201: SubscriptionOut, **WRITE_ERRORS}, auth=write_key, tags=["writes"],
             openapi_extra=IDEMPOTENCY_DOC, summary="Subscribe a customer to a price")
@idempotent
def subscribe(request: HttpRequest, body: SubscribeIn) -> JsonResponse:
    """The customer is subscribed to the price (its amount × quantity a period, its cadence,
    currency and trial: the price's, else its product's) and its first period charged now
    to its default card, off-session, as the portal's subscribe does (paid in advance,
    docs/MONEY.md M1). ``payment_day``: default today's day. ``items`` may add one metered
    prices (each a ``price``, no ``quantity``, in the fixed price's currency and interval, of
    its own meter): their usage is billed with each later payment; metered items alone
    subscribe to their usage (no fixed fee, the first payment a receipt of 0:
    ``choose_usage_only``, the first of them the price subscribed to). Further fixed prices
    in ``items`` are its add-ons (docs/PRICING.md "Add-ons": another product's, for one, in
    its currency, interval and tax behaviour), billed with it from the first charge, on a
    line each. A tiered, package or archived price, or a quantity out of its bounds, is a 400 naming the field; a declined
    first charge a 402 (the subscription ended unpaid)."""
    metered, add_on_items = _metered_items(body)
    # Metered items alone: the first is the price subscribed to, its usage, no fixed fee
    # (``choose_offer``); the others are billed beside it.
    usage_alone = metered[0] if metered and body.items is None and body.price is None else None
    if usage_alone is not None:
        metered = metered[1:]
    price_id, quantity, prefix = (usage_alone[0].PriceId, None, usage_alone[1]) if usage_alone \
        else _price_and_quantity(body)
    account = found(access.get_account(body.customer), "customer", "customer")
    price = usage_alone[0] if usage_alone else access.get_price(price_id)
    product = access.get_product(price.SKU) if price is not None else None
    if price is None or product is None:
        raise ApiError(404, f"No such price: {price_id}.", param=f"{prefix}price")
    if product.Status != ProductStatus.ACTIVE:
        raise ApiError(400, f"The product {product.SKU} is retired: it cannot be subscribed to.",
                       param=f"{prefix}price")
    if price.Meter and quantity is not None:  # the flat form of a metered price alone: no seats
        raise ApiError(400, "A metered price's item has no quantity: its usage is billed.", param=f"{prefix}quantity")
    with translation.override("en"):
        try:
            choice = choose_offer(price, product, quantity)
        except PriceRefused as refused:
            raise ApiError(400, str(refused), param=f"{prefix}{refused.field}") from None
    for other, prefix in metered:
        if other.Currency != price.Currency:
            raise ApiError(400, f"The metered price is in {other.Currency}, the fixed price in {price.Currency}: "
                                "both must be in one currency.", param=f"{prefix}price")
        if not bills_with(other, choice.interval, choice.interval_count):
            raise ApiError(400, "The metered price's interval is not the fixed price's: its usage is billed with "
                                "each payment, so both must have one interval.", param=f"{prefix}price")
        if not taxed_alike(other, choice.tax_behavior):
            raise ApiError(400, f"The metered price's tax_behavior is {tax_behavior_word(other.TaxBehavior)}, the "
                                f"fixed price's {tax_behavior_word(choice.tax_behavior)}: one charge bills both, so both must "
                                "have one tax_behavior.", param=f"{prefix}price")
    # the fixed items after the first (so never usage alone: a fixed price comes first)
    add_ons = _add_ons(add_on_items, choice, product)
    card = access.default_card(account, access.get_cards(account.account_id))
    if card is None:
        raise ApiError(409, "The customer has no card to pay with: add one in the portal first.",
                       type="invalid_state")
    day = today()
    with refusals():
        started = subscription_actions.subscribe_to_price(
            account, product, choice, payment_day=body.payment_day or day.day, card=card_token(card), today=day,
            actor=actor_of(request), billing_address=card.Details.BillingAddress, card_id=card.card_id,
            # Named after the first payment, which bills no usage: its next payments bill it in arrears.
            metered_price_id=metered[0][0].PriceId if metered else None,
            more_metered_price_ids=tuple(other.PriceId for other, _ in metered[1:]), add_ons=add_ons)
    if not started.started:
        raise ApiError(402, f"The first payment did not go through ({started.outcome.reason or 'declined'}): "
                            "the subscription ended unpaid.", type="card_error")
    return shown(started.sub, status=201)
