"""The SKU in a receipt's key (``REC#<day>#SKU#<this>#SUB#<id>``) for a charge that is not
the period's own. The period's receipt names the product's SKU; a change paid the same day
(a switch of price within the product, a change of seats) marks it, so that its receipt
never meets the period's, nor another change's. The charge's metadata carries the marked SKU
as ``sku``: the reconciliation finds the receipt by it."""

from __future__ import annotations

MARK = "~"


def switch_receipt_sku(old_sku: str, new_sku: str) -> str:
    """A switch's: the new product's, marked ``~switch`` when the product stays the same."""
    return new_sku if new_sku != old_sku else f"{new_sku}{MARK}switch"


def seats_receipt_sku(sku: str, version: int | None) -> str:
    """A change of seats': the product's marked with the change (the subscription's version
    when it was quoted: ``TEAM~seats3``)."""
    return f"{sku}{MARK}seats{int(version or 0)}"


def product_sku(receipt_sku: str) -> str:
    """The product a receipt's SKU names: the part before any mark."""
    return receipt_sku.split(MARK, 1)[0]
