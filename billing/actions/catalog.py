"""Catalog changes by staff: add, edit and retire a product, each with its audit event.
They belong to no customer: audited in the pseudo-account ``CATALOG_EVENTS_ACCOUNT``."""

from __future__ import annotations

from billing import access
from billing.models import CATALOG_EVENTS_ACCOUNT, AuditAction, Product


def product_snapshot(product: Product) -> dict:
    """What an audit event records of a product."""
    return {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
            "Currency": product.Currency, "Status": product.Status, "Description": product.Description,
            "TrialDays": product.trial_days, "AddOn": product.sold_as_add_on}


def _audit(actor: str, action: AuditAction, sku: str, before: dict | None, after: dict | None) -> None:
    access.record_event(CATALOG_EVENTS_ACCOUNT, actor=actor, action=action, subject=f"SKU#{sku}",
                        before=before, after=after)


def add_product(sku: str, name: str, amount: int, currency: str, description: str, *, actor: str,
                trial_days: int = 0, add_on: bool = False) -> Product:
    """A new product; ``AlreadyExists`` when the SKU is taken (nothing written). ``add_on``:
    offered as an add-on too (billing/rules/add_ons.py)."""
    product = access.create_product(sku, name, amount, currency, description, trial_days=trial_days,
                                    add_on=add_on)
    after = {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
             "Currency": product.Currency, "Status": product.Status}
    if product.trial_days:
        after["TrialDays"] = product.trial_days
    if product.sold_as_add_on:
        after["AddOn"] = True
    _audit(actor, AuditAction.PRODUCT_CREATED, product.SKU, None, after)
    return product


def edit_product(product: Product, *, name: str, amount: int, currency: str, description: str,
                 actor: str, trial_days: int | None = None, add_on: bool | None = None) -> Product:
    """New details for a product: new subscriptions take its new price (M4) and trial
    (``trial_days``; None: unchanged)."""
    before = product_snapshot(product)
    updated = access.update_product(product.SKU, name=name, amount=amount, currency=currency,
                                    description=description, trial_days=trial_days, add_on=add_on)
    _audit(actor, AuditAction.PRODUCT_UPDATED, product.SKU, before, product_snapshot(updated))
    return updated


def retire_product(product: Product, *, actor: str) -> Product:
    """The product takes no new subscriptions; existing ones go on being billed."""
    before = product_snapshot(product)
    retired = access.retire_product(product.SKU)
    _audit(actor, AuditAction.PRODUCT_RETIRED, product.SKU, before, product_snapshot(retired))
    return retired
