"""Meters and their usage events (docs/PRICING.md, "Metered usage"): `POST /meter_events` counts each event exactly once."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["meters"])
