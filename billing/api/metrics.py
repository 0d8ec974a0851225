"""Revenue figures (docs/ANALYTICS.md): the same numbers as the staff Revenue page."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["metrics"])
