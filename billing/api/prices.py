"""A product's prices (docs/PRICING.md): listed with the product, added and archived by a write key."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["prices"])
