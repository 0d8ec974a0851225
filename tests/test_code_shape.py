"""The code's shape, checked: public package APIs and no reaching into another module's
private names (issue 13). These are rules a reviewer would otherwise have to remember."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = [ROOT / "billing"] + ([ROOT / "shop"] if (ROOT / "shop").exists() else [])


def _sources() -> list[Path]:
    return [f for app in APPS for f in app.rglob("*.py") if "migrations" not in f.parts]


def _package_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        package = _package_of(path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            offenders += [f"{path.relative_to(ROOT)}: {alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
            # A package-private module (``_common``) is for its own package's modules only.
            module = "." * node.level + (node.module or "")
            target = module if not node.level else package
            if any(part.startswith("_") and not part.startswith("__") for part in (node.module or "").split(".")) \
                    and (not node.level and not target.startswith(package)):
                offenders.append(f"{path.relative_to(ROOT)}: from {module}")
    assert offenders == []


PACKAGES = ["billing.access", "billing.batches", "billing.views", "billing.staff"]


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_lists_its_public_api(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert exported, f"{name} exports nothing"
    assert len(exported) == len(set(exported)), f"{name}.__all__ names something twice"
    for attr in exported:
        assert not attr.startswith("_"), f"{name} exports private {attr}"
        assert hasattr(package, attr), f"{name}.__all__ names {attr}, which it does not define"


def test_batches_do_not_re_export_the_access_layer() -> None:
    # Patching ``batches.access.x`` must not be a way to patch the global access layer.
    import billing.batches

    assert "access" not in billing.batches.__all__
    assert not hasattr(billing.batches, "mail")


def test_only_access_due_dates_writes_the_due_index_keys() -> None:
    # The GSI hash keys are derived in one module (billing/access/due_dates.py), so a
    # change to how they are derived (sharding, issue 17) cannot miss a writer. The
    # derived hash keys (``<date>#<shard>``) likewise, and their template is formatted only
    # there and by the readers (access/due_shards.py).
    names = "NextPaymentDate|NextReminderDate|DuePaymentKey|DueReminderKey"
    # ``X.set(`` / ``X.remove(``, a keyword ``X=...``, or an assignment ``item.X = ...``
    writes = re.compile(rf"\b({names})(\.(set|remove)\(|=(?!=))|\.({names})\s*=(?!=)")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("billing", "shop", "scripts")
        for path in (ROOT / package).rglob("*.py")
        if path.name != "due_dates.py" and "migrations" not in path.parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if writes.search(line) and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_only_the_due_modules_build_due_index_keys() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("billing", "shop", "scripts")
        for path in (ROOT / package).rglob("*.py")
        if path.name not in ("due_dates.py", "due_shards.py", "models.py") and "migrations" not in path.parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "DUE_KEY" in line and not line.lstrip().startswith("#")
    ]
    assert offenders == []
