"""The product catalog: the SKUs customers can subscribe to, and staff's edits to it.
Existing subscriptions copy their price and never read it back from here.
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid, iso_now, refused_as
from billing.exceptions import AlreadyExists, ConditionFailed
from billing.models import Product, ProductStatus


def list_products(*, include_retired: bool = False) -> list[Product]:
    products = Product.query(Product.pk())
    return [p for p in products if include_retired or p.Status == ProductStatus.ACTIVE]


@absent_if_invalid()
def get_product(sku: str) -> Product | None:
    try:
        return Product.get(Product.pk(), Product.sk(sku=sku))
    except DoesNotExist:
        return None


def create_product(sku: str, name: str, amount: int, currency: str, description: str = "") -> Product:
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    product = Product(
        Product.pk(), Product.sk(sku=sku), SKU=sku, Name=name, Description=description or None,
        PaymentAmount=amount, Currency=currency.upper(), CreatedDate=iso_now(),
    )
    with refused_as(AlreadyExists, sku):
        product.save(condition=Product.SK.does_not_exist())
    return product


def update_product(
    sku: str, *, name: str, amount: int, currency: str, description: str = ""
) -> Product:
    """UpdateItem on an existing catalog entry. Existing subscriptions keep the price
    they signed up for: it is copied onto each subscription, never read back from here."""
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    product = Product(Product.pk(), Product.sk(sku=sku))
    actions = [
        Product.Name.set(name),
        Product.PaymentAmount.set(amount),
        Product.Currency.set(currency.upper()),
        Product.Description.set(description) if description else Product.Description.remove(),
    ]
    with refused_as(ConditionFailed, sku):
        product.update(actions=actions, condition=Product.SK.exists())
    return product


def retire_product(sku: str) -> Product:
    """No new subscriptions (``list_products`` hides it); existing ones are untouched."""
    product = Product(Product.pk(), Product.sk(sku=sku))
    with refused_as(ConditionFailed, sku):
        product.update(actions=[Product.Status.set(ProductStatus.RETIRED)], condition=Product.SK.exists())
    return product
