"""No Scan anywhere in the shop: every read is a GetItem, a Query or a BatchGetItem."""

from __future__ import annotations

import re
from pathlib import Path

SHOP = Path(__file__).resolve().parents[2] / "shop"


def test_the_shop_never_scans() -> None:
    offenders = [str(path) for path in SHOP.rglob("*.py")
                 if re.search(r"\.scan\(|\bScan\b|\.parallel_scan\(", path.read_text())]
    assert offenders == []
