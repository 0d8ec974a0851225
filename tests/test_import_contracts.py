"""The layout's import rules, as import-linter contracts (.importlinter; docs/DEVELOPMENT.md,
"The rules of the layout"): they hold on this tree, and each kind of contract is shown
to break on a copy of the tree with one planted import. The scripts, which are no
package, are checked here: no script imports another's own code (benchkit.py is what
they share)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The contracts' root packages (.importlinter) and the file itself: all a check reads.
PACKAGES = ("billing", "core", "shop", "devtools", "rpay_site")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` (as ``make lint`` runs it) on ``tree``: its packages, its contracts.
    A process of its own, with only ``tree`` on the path, so that it reads the tree's
    files and not the modules this test run has imported."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A copy of the packages' sources and the contracts, to plant an import in."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.mo"))
    shutil.copy(ROOT / ".importlinter", tmp_path)
    return tmp_path


def plant(tree: Path, module: str, code: str) -> None:
    path = tree / module
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.exists() else "") + "\n\n" + code)


# Each planted import and what the report must say. The first ones sit inside a function:
# a lazy import counts like any other.
PLANTED = {
    "rules import the pages": (
        "billing/rules/schedule.py", "def _planted():\n    from billing.views.common import subscription_or_404\n",
        ["Billing in layers", "billing.rules is not allowed to import billing.views",
         "billing.rules.schedule -> billing.views.common"]),
    "access imports an action": (
        "billing/access/accounts.py", "def _planted():\n    from billing.actions import accounts\n",
        ["billing.access is not allowed to import billing.actions"]),
    "an action imports a batch": (
        "billing/actions/accounts.py", "import billing.batches.runs\n",
        ["Actions and batches are independent", "billing.actions is not allowed to import billing.batches"]),
    "core imports billing": (
        "core/money.py", "def _planted():\n    import billing.models\n",
        ["core (and devtools) import neither app", "core.money -> billing.models"]),
    "billing imports the shop": (
        "billing/notify.py", "from shop import models\n",
        ["Billing never imports the shop", "billing.notify -> shop.models"]),
    "a new billing module has no layer": (
        "billing/unplaced.py", "from billing import models\n",
        ["The following modules are not listed as layers", "- billing.unplaced"]),
}


@pytest.mark.parametrize("name", PLANTED)
def test_a_planted_import_breaks_its_contract(tree_copy: Path, name: str) -> None:
    module, code, expected = PLANTED[name]
    assert lint_imports(tree_copy).returncode == 0, "the copy must pass before the plant"
    plant(tree_copy, module, code)
    result = lint_imports(tree_copy)
    assert result.returncode != 0, result.stdout
    for text in expected:
        assert text in result.stdout, result.stdout


# --- the scripts --------------------------------------------------------------------------

# The scripts' shared helpers; and bench.py, which runs the benchmark's sections (each also
# runnable alone) and so imports them. No other script imports another.
SHARED = {"benchkit"}
RUNS_SECTIONS = {"bench": {"bench_api", "bench_revenue", "bench_shop", "bench_stripe", "bench_usage",
                           "bench_webhooks"}}


def imported_names(source: str) -> set[str]:
    """The top-level module names a file imports, inside functions too."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def scripts_importing_scripts(sources: dict[str, str]) -> list[str]:
    """``importer -> imported`` for each script that imports another script's own code."""
    return sorted(f"{name} -> {other}" for name, source in sources.items()
                  for other in imported_names(source) & set(sources)
                  if other != name and other not in SHARED and other not in RUNS_SECTIONS.get(name, set()))


def test_no_script_imports_another() -> None:
    sources = {path.stem: path.read_text() for path in sorted((ROOT / "scripts").glob("*.py"))}
    assert set(RUNS_SECTIONS["bench"]) | SHARED <= set(sources)
    assert scripts_importing_scripts(sources) == []


def test_the_scripts_check_catches_a_planted_import() -> None:
    sources = {"bench": "import bench_api\nimport benchkit\n", "bench_api": "", "benchkit": "",
               "profile_payments": "import benchkit\n\ndef main():\n    import bench\n",
               "bench_stripe": "from bench_api import run\n"}
    assert scripts_importing_scripts(sources) == ["bench_stripe -> bench_api", "profile_payments -> bench"]
