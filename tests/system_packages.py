"""The system (Debian) packages some tests need beyond `make install`, said in one line.

`make install` brings the Python and npm packages and a Java runtime; a few tests need
more from the system: Chromium for the browser tests, CJK fonts for the browser pages in
Korean and Chinese (without them a Chinese sentence has no glyphs to wrap and the page
overflows), PostgreSQL for the tests on a real server, GNU gettext for the check that the
.po files are current, poppler-utils for the check that receipt PDFs embed their fonts.
A machine without some of them still passes ``make test``: the
run's header and summary name what is missing in one line, with the apt-get command, and
those tests are skipped with the reason; REQUIRE_BROWSER=1 / REQUIRE_POSTGRES=1 (CI)
fail them instead. Each test's own fixture does the skipping (tests/browser.py, the
postgres_server fixture, tests/test_i18n.py); this plugin adds the fonts' case.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from devtools.localpostgres import missing_reason as postgres_missing_reason

CJK_LANGUAGES = {"ko", "zh-hans"}


def _has_font_for(language: str) -> bool:
    """fontconfig's answer (what Chromium sees); without its fc-list, whether a CJK font
    file is where Debian's fonts-noto-cjk puts it."""
    if shutil.which("fc-list") is None:
        return any(Path("/usr/share/fonts").glob("**/*CJK*"))
    done = subprocess.run(["fc-list", f":lang={language}", "family"], capture_output=True, text=True, timeout=30)
    return done.returncode == 0 and bool(done.stdout.strip())


def _chromium() -> bool:
    from tests.browser import chromium_path

    return chromium_path() is not None


@dataclass(frozen=True)
class SystemPackage:
    name: str  # the Debian package
    needed_by: str
    present: Callable[[], bool]


PACKAGES = [
    SystemPackage("chromium", "the browser tests", _chromium),
    SystemPackage("fonts-noto-cjk", "the browser pages in Korean and Chinese",
                  lambda: _has_font_for("zh") and _has_font_for("ko")),
    SystemPackage("postgresql", "the tests on PostgreSQL", lambda: postgres_missing_reason() is None),
    SystemPackage("gettext", "the check that the .po files are current", lambda: shutil.which("xgettext") is not None),
    SystemPackage("poppler-utils", "the check that receipt PDFs embed their fonts",
                  lambda: shutil.which("pdffonts") is not None),
]


@cache
def missing_packages() -> tuple[SystemPackage, ...]:
    return tuple(p for p in PACKAGES if not p.present())


def missing_line() -> str | None:
    """One line naming what is missing and how to install it; None when nothing is."""
    missing = missing_packages()
    if not missing:
        return None
    names = " ".join(p.name for p in missing)
    needs = "; ".join(f"{p.name} for {p.needed_by}" for p in missing)
    return (f"missing system packages (apt-get install {names}): {needs}. Their tests are skipped "
            "(REQUIRE_BROWSER=1 / REQUIRE_POSTGRES=1 fail them instead)")


def pytest_report_header(config: pytest.Config) -> list[str]:
    line = missing_line()
    return [line] if line else []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = missing_line()
    if line:
        terminalreporter.write_line(line, yellow=True)


@pytest.fixture(autouse=True)
def cjk_fonts_for_cjk_pages(request: pytest.FixtureRequest) -> None:
    """A browser test of a page in Korean or Chinese needs the CJK fonts to lay it out."""
    callspec = getattr(request.node, "callspec", None)
    language = callspec.params.get("language") if callspec else None
    if language not in CJK_LANGUAGES or request.node.get_closest_marker("browser") is None:
        return
    if any(p.name == "fonts-noto-cjk" for p in missing_packages()):
        reason = f"no CJK fonts for a page in {language} (apt-get install fonts-noto-cjk)"
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
