"""A product's prices by staff or a write key (docs/PRICING.md): add one, archive one. A
price's amounts never change (archive it and add another, as Stripe); each write carries
its audit event (in ``ACC#CATALOG``, with the products')."""

from __future__ import annotations

from billing import access
from billing.models import Price
from billing.rules.pricing import PriceTerms


def add_price(sku: str, terms: PriceTerms, *, actor: str, nickname: str | None = None, unit_label: str | None = None,
              trial_days: int | None = None, min_quantity: int | None = None, max_quantity: int | None = None,
              meter: str | None = None, tax_behavior: str | None = None) -> Price:
    """A new price of ``sku`` (``NoSuchProduct`` when the catalog lacks it)."""
    return access.create_price(sku, terms, actor=actor, nickname=nickname, unit_label=unit_label,
                               trial_days=trial_days, min_quantity=min_quantity, max_quantity=max_quantity,
                               meter=meter, tax_behavior=tax_behavior)


def archive_price(price: Price, *, actor: str) -> Price:
    """New subscriptions no longer take it (``ConditionFailed``: archived already;
    ``DefaultPriceFixed``: a product's derived default price)."""
    return access.archive_price(price, actor=actor)
