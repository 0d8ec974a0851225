"""Fault injection for tests: ``step(name)`` runs after each step of a checkout, a
cancellation or a refund ("planned", "placed", "charged", "declined", "closed"). A test
sets ``hook`` to raise there and so simulates a crash between two steps."""

from __future__ import annotations

from collections.abc import Callable

hook: Callable[[str], None] | None = None


def step(name: str) -> None:
    if hook is not None:
        hook(name)
