"""No Scan anywhere in the shop: every read is a GetItem, a Query or a BatchGetItem."""

from __future__ import annotations

import ast
from pathlib import Path

SHOP = Path(__file__).resolve().parents[2] / "shop"


def test_the_shop_never_scans() -> None:
    offenders = []
    for path in SHOP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in {"scan", "parallel_scan"}:
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
    # and the check can see one
    assert any(isinstance(n, ast.Call) for n in ast.walk(ast.parse("Model.scan()")))
