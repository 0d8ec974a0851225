"""A machine set up as the README says passes `make test`: a missing system package is
named in one line and its tests are skipped with the reason (CI's REQUIRE_BROWSER=1
fails them instead). Simulated here with a fontconfig that knows no fonts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import chromium_path
from tests.system_packages import PACKAGES, SystemPackage, missing_line, missing_packages

ROOT = Path(__file__).resolve().parent.parent


def test_the_line_names_each_missing_package_and_the_install_command(monkeypatch) -> None:
    absent = (SystemPackage("fonts-noto-cjk", "the browser pages in Korean and Chinese", lambda: False),
              SystemPackage("postgresql", "the tests on PostgreSQL", lambda: False))
    monkeypatch.setattr("tests.system_packages.missing_packages", lambda: absent)
    line = missing_line()
    assert line.startswith("missing system packages (apt-get install fonts-noto-cjk postgresql): ")
    assert "\n" not in line
    monkeypatch.setattr("tests.system_packages.missing_packages", lambda: ())
    assert missing_line() is None


def test_every_package_is_one_that_ci_installs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    for package in PACKAGES:
        assert package.name in ci, f".ci/run does not install {package.name}"
    assert set(missing_packages()) <= set(PACKAGES)


def run_without_fonts(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    config = tmp_path / "fonts.conf"
    config.write_text('<?xml version="1.0"?>\n<fontconfig></fontconfig>\n')
    environment = {**os.environ, "FONTCONFIG_FILE": str(config), "REQUIRE_BROWSER": "0", **env}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
         "tests/test_browser_i18n.py::test_pages_in_each_language_fit_the_screen[zh-hans]"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(chromium_path() is None, reason="Chromium is not installed (apt-get install chromium)")
def test_without_cjk_fonts_the_chinese_page_is_skipped_with_the_reason(tmp_path) -> None:
    done = run_without_fonts(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "missing system packages (apt-get install fonts-noto-cjk)" in done.stdout
    assert "no CJK fonts for a page in zh-hans (apt-get install fonts-noto-cjk)" in done.stdout
    assert "1 skipped" in done.stdout

    required = run_without_fonts(tmp_path, REQUIRE_BROWSER="1")
    assert required.returncode == 1
    assert "REQUIRE_BROWSER=1 but no CJK fonts" in required.stdout
