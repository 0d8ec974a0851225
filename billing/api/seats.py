"""A subscription's quantity (seats): changed by a write key as in the portal, prorated
by the same rules (docs/MONEY.md M7)."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["seats"])
