"""The product catalog: the SKUs customers can subscribe to, and staff's edits to it.
Existing subscriptions copy their price and never read it back from here.
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid, iso_now, refused_as
from billing.exceptions import AlreadyExists, ConditionFailed
from billing.models import MAX_TRIAL_DAYS, Product, ProductStatus


def list_products(*, include_retired: bool = False) -> list[Product]:
    # Only the products' keys: the partition holds their prices too (``PRICE#``).
    products = Product.query(Product.pk(), Product.SK.startswith(Product.sk_template.prefix))
    return [p for p in products if include_retired or p.Status == ProductStatus.ACTIVE]


@absent_if_invalid()
def get_product(sku: str) -> Product | None:
    try:
        return Product.get(Product.pk(), Product.sk(sku=sku))
    except DoesNotExist:
        return None


def _check_trial_days(trial_days: int) -> None:
    if not isinstance(trial_days, int) or not 0 <= trial_days <= MAX_TRIAL_DAYS:
        raise ValueError(f"trial days must be 0-{MAX_TRIAL_DAYS}, not {trial_days!r}")


def create_product(sku: str, name: str, amount: int, currency: str, description: str = "", *,
                   trial_days: int = 0, add_on: bool = False) -> Product:
    """``trial_days``: the free trial a new subscription gets (0: none; stored only when set).
    ``add_on``: offered as an add-on to other products' subscriptions (stored only when set)."""
    if not isinstance(amount, int) or amount <= 0:
        raise ValueError("amount must be a positive integer number of minor units")
    _check_trial_days(trial_days)
    product = Product(
        Product.pk(), Product.sk(sku=sku), SKU=sku, Name=name, Description=description or None,
        PaymentAmount=amount, Currency=currency.upper(), CreatedDate=iso_now(), TrialDays=trial_days or None,
        AddOn=True if add_on else None,
    )
    with refused_as(AlreadyExists, sku):
        product.save(condition=Product.SK.does_not_exist())
    return product


def update_product(
    sku: str, *, name: str, amount: int, currency: str, description: str = "", trial_days: int | None = None,
    add_on: bool | None = None,
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
    if trial_days is not None:  # None: unchanged; 0: no trial any more (for new subscriptions)
        _check_trial_days(trial_days)
        actions.append(Product.TrialDays.set(trial_days) if trial_days else Product.TrialDays.remove())
    if add_on is not None:  # None: unchanged; its subscriptions keep the add-ons they have
        actions.append(Product.AddOn.set(True) if add_on else Product.AddOn.remove())
    with refused_as(ConditionFailed, sku):
        product.update(actions=actions, condition=Product.SK.exists())
    return product


def retire_product(sku: str) -> Product:
    """No new subscriptions (``list_products`` hides it); existing ones are untouched."""
    product = Product(Product.pk(), Product.sk(sku=sku))
    with refused_as(ConditionFailed, sku):
        product.update(actions=[Product.Status.set(ProductStatus.RETIRED)], condition=Product.SK.exists())
    return product
