"""A product's prices (docs/PRICING.md, docs/TABLE.md "Prices"): in the catalog's
partition beside the product (``PRICE#<SKU>#<PriceId>``), so a product's prices are one
Query and a price one GetItem by its id (which holds its SKU). A price's amounts never
change: it is made (only for an existing product) and archived, each with its audit event
in one TransactWriteItems.

A product made before prices existed has none stored: its default price (monthly,
per_unit, the product's PaymentAmount and Currency, id ``price_default_<SKU>``) is derived
on each read and never stored, so it always says what subscribing to the product charges
(the subscribe path still reads the product's PaymentAmount, which staff may edit)."""

from __future__ import annotations

from typing import Any

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid, iso_now, new_id, refused_as
from billing.access.catalog import get_product
from billing.access.events import new_event
from billing.exceptions import ConditionFailed
from billing.models import (
    CATALOG_EVENTS_ACCOUNT,
    BillingItem,
    Price,
    PriceStatus,
    Product,
    ProductStatus,
    Subscription,
)
from billing.rules.price_objects import default_price_id, price_id_for, sku_of_price_id, tier_maps
from billing.rules.pricing import BillingScheme, PriceTerms
from billing.rules.tax import stored_tax_behavior
from core.dynamo import engine

PRICE_CREATED = "price.created"
PRICE_ARCHIVED = "price.archived"
# A price's quantity bounds and trial: the API's bounds (billing/api/schemas.py MAX_WHOLE).
MAX_TRIAL_DAYS = 365


class NoSuchProduct(ValueError):
    """A price for a SKU the catalog does not have."""


class DefaultPriceFixed(ValueError):
    """The derived default price follows its product: it cannot be archived on its own."""


def default_price(product: Product) -> Price:
    """The monthly per_unit price a product has without any stored price (never saved)."""
    sku = product.SKU
    return Price(Price.pk(), Price.sk(sku=sku, price_id=default_price_id(sku)), PriceId=default_price_id(sku),
                 SKU=sku, Currency=product.Currency, UnitAmount=int(product.PaymentAmount), Interval="month",
                 IntervalCount=1, BillingScheme=BillingScheme.PER_UNIT, TrialDays=product.TrialDays,
                 Status=PriceStatus.ACTIVE, CreatedDate=product.CreatedDate)


@absent_if_invalid(list)
def list_prices(sku: str, *, include_archived: bool = False, product: Product | None = None) -> list[Price]:
    """The product's prices, oldest first: its default price first (when it has no stored
    price of its own), then the stored ones (one Query of ``PRICE#<SKU>#``; one GetItem of
    the product too, unless the caller has it). None for a SKU the catalog lacks."""
    product = product or get_product(sku)
    if product is None:
        return []
    stored = sorted(Price.query(Price.pk(), Price.SK.startswith(f"PRICE#{sku}#")), key=lambda p: p.CreatedDate)
    prices = [default_price(product), *stored]
    return [p for p in prices if include_archived or p.Status == PriceStatus.ACTIVE]


def list_products_with_prices(*, include_inactive: bool = False) -> tuple[list[Product], dict[str, list[Price]]]:
    """The active products and their stored active prices by SKU (oldest first), in the one
    Query ``list_products`` makes: the catalog's partition holds both, ``PRICE#<SKU>#``
    sorting before ``SKU#``. The subscribe page offers each product with its metered price
    this way, at no request more. Any other item in that range is ignored by type.
    ``include_inactive``: the retired products and the archived prices too."""
    products: list[Product] = []
    prices: dict[str, list[Price]] = {}
    for item in BillingItem.query(Product.pk(), BillingItem.SK.between("PRICE#", Product.sk_template.prefix + "\uffff")):
        if isinstance(item, Product) and (include_inactive or item.Status == ProductStatus.ACTIVE):
            products.append(item)
        elif isinstance(item, Price) and (include_inactive or item.Status == PriceStatus.ACTIVE):
            prices.setdefault(item.SKU, []).append(item)
    for stored in prices.values():
        stored.sort(key=lambda p: p.CreatedDate)
    return products, prices


@absent_if_invalid()
def get_price(price_id: str) -> Price | None:
    """One GetItem: the id holds the SKU (``price_<SKU>_<random>``); the default price
    (``price_default_<SKU>``) is its product's GetItem."""
    parsed = sku_of_price_id(price_id)
    if parsed is None:
        return None
    sku, is_default = parsed
    if is_default:
        product = get_product(sku)
        return default_price(product) if product is not None else None
    try:
        return Price.get(Price.pk(), Price.sk(sku=sku, price_id=price_id))
    except DoesNotExist:
        return None


def metered_prices(sub: Subscription) -> dict[str, Price]:
    """``sub``'s metered prices that are still there and metered, by id, in its order (a
    GetItem each)."""
    found = {}
    for price_id in sub.metered_price_ids:
        price = get_price(price_id)
        if price is not None and price.Meter:
            found[price_id] = price
    return found


def price_snapshot(price: Price) -> dict[str, Any]:
    """What an audit event records of a price."""
    return {"PriceId": price.PriceId, "SKU": price.SKU, "Currency": price.Currency, "UnitAmount": price.UnitAmount,
            "UnitAmountDecimal": price.UnitAmountDecimal, "Interval": price.Interval,
            "IntervalCount": price.IntervalCount, "BillingScheme": price.BillingScheme, "TiersMode": price.TiersMode,
            "Tiers": [t.as_dict() for t in price.Tiers or ()] or None, "PackageSize": price.PackageSize,
            "Meter": price.Meter, "TaxBehavior": price.TaxBehavior, "Status": price.Status}


def _bounded(value: int | None, what: str, low: int, high: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be a whole number from {low} to {high}")
    return value


def create_price(sku: str, terms: PriceTerms, *, actor: str, nickname: str | None = None,
                 unit_label: str | None = None, trial_days: int | None = None, min_quantity: int | None = None,
                 max_quantity: int | None = None, meter: str | None = None, tax_behavior: str | None = None) -> Price:
    """A new price of an existing product (``NoSuchProduct`` otherwise; in any currency,
    as Stripe's prices), with its audit event: one TransactWriteItems (the product's existence is
    checked in it). ``tax_behavior``: ``TaxBehavior``'s words (None: unspecified).
    ``ValueError`` names what is wrong with the rest."""
    product = get_product(sku)
    if product is None:
        raise NoSuchProduct(f"no product {sku}")
    trial_days = _bounded(trial_days, "trial days", 0, MAX_TRIAL_DAYS)
    min_quantity = _bounded(min_quantity, "the minimum quantity", 0, 10**9)
    max_quantity = _bounded(max_quantity, "the maximum quantity", 1, 10**9)
    if min_quantity is not None and max_quantity is not None and max_quantity < min_quantity:
        raise ValueError("the maximum quantity is below the minimum")
    try:
        behavior = stored_tax_behavior(tax_behavior)
    except ValueError:
        raise ValueError(f"the tax behaviour is inclusive, exclusive or unspecified, not {tax_behavior!r}") from None
    price_id = price_id_for(sku, new_id())
    unit = terms.unit_amount
    whole = unit is not None and unit == unit.to_integral_value()
    price = Price(
        Price.pk(), Price.sk(sku=sku, price_id=price_id), PriceId=price_id, SKU=sku, Currency=terms.currency,
        UnitAmount=int(unit) if whole else None,
        UnitAmountDecimal=None if unit is None or whole else format(unit.normalize(), "f"),
        Interval=str(terms.interval), IntervalCount=terms.interval_count, BillingScheme=str(terms.billing_scheme),
        TiersMode=str(terms.tiers_mode) if terms.tiers_mode else None,
        Tiers=tier_maps(terms.tiers) if terms.tiers else None, PackageSize=terms.package_size,
        UnitLabel=(unit_label or "").strip() or None, TrialDays=trial_days or None, MinQuantity=min_quantity,
        MaxQuantity=max_quantity, Meter=(meter or "").strip() or None, TaxBehavior=behavior, Status=PriceStatus.ACTIVE,
        CreatedDate=iso_now(), Nickname=(nickname or "").strip() or None,
    )
    with refused_as(NoSuchProduct, sku), engine.transact_write() as tx:
        tx.condition_check(Product, Product.pk(), Product.sk(sku=sku), condition=Product.SK.exists())
        tx.save(price, condition=Price.SK.does_not_exist())
        tx.save(new_event(CATALOG_EVENTS_ACCOUNT, actor=actor, action=PRICE_CREATED, subject=price.SK,
                          after=price_snapshot(price)))
    return price


def archive_price(price: Price, *, actor: str) -> Price:
    """No new subscriptions to it; its amounts stay as they were. ``ConditionFailed`` when
    it is archived already (or absent), ``DefaultPriceFixed`` for a derived default price."""
    if price.PriceId == default_price_id(price.SKU):
        raise DefaultPriceFixed("a product's default price follows the product: retire the product instead")
    before = price_snapshot(price)
    with refused_as(ConditionFailed, price.PriceId), engine.transact_write() as tx:
        tx.update(Price(price.PK, price.SK), actions=[Price.Status.set(PriceStatus.ARCHIVED)],
                  condition=Price.SK.exists() & (Price.Status == PriceStatus.ACTIVE))
        price.Status = PriceStatus.ARCHIVED
        tx.save(new_event(CATALOG_EVENTS_ACCOUNT, actor=actor, action=PRICE_ARCHIVED, subject=price.SK,
                          before=before, after=price_snapshot(price)))
    return price

