"""What the tests of the demo's metered parts share: a part that needs the prices and usage
parts says so when run first; then those two are seeded."""

from __future__ import annotations

from datetime import date
from types import ModuleType

from billing.management.demo import prices, usage


def seed_after_prices_and_usage(part: ModuleType, label: str, today: date) -> None:
    assert part.seed(today)[0].startswith(f"{label}: no metered API calls price")
    prices.seed(today)
    usage.seed(today)
