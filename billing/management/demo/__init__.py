"""The demo's parts for the capabilities added beside the original portal (prices,
usage, revenue history): each module's ``seed(today)`` is called by ``seed_demo`` after
the demo accounts exist, and returns the lines it prints."""

from __future__ import annotations

import importlib
import pkgutil
from datetime import date
from types import ModuleType


def demo_parts() -> list[ModuleType]:
    """Every part in this package, by name (each seeds its own data, so the order is free)."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def seed_parts(today: date) -> list[str]:
    """Run every part's ``seed(today)``; the lines they report, in order."""
    lines: list[str] = []
    for part in demo_parts():
        lines.extend(part.seed(today))
    return lines
