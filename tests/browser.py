"""Playwright driving Debian's Chromium against pytest-django's live server.

Without a Chromium the browser tests are skipped with a visible reason, except when
``REQUIRE_BROWSER=1`` (CI): then they fail. Screenshots go to ``artifacts/screenshots``
(git-ignored).
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from functools import wraps
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    path = chromium_path()
    if path is None:
        _unavailable("no Chromium found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        _unavailable("playwright is not installed")
    # Playwright's sync API runs an event loop in this thread; the Django ORM calls
    # the tests make around it are still plain synchronous calls.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import expect

    # expect() polls until its condition holds: the same 15 s as the pages' actions, so a
    # loaded CI machine finishing a navigation late is waited for, not failed.
    expect.set_options(timeout=15_000)
    with sync_playwright() as pw, pytest.MonkeyPatch.context() as patch:
        _reads_wait_for_load(patch)
        chromium = pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


# A click that navigates returns once the new page has *started* loading (its URL is
# already the new one), so a read taken then sees a half-parsed document: "0 receipts"
# on a page still arriving. expect() retries; these one-shot reads do not, so each
# first waits for the page's load event (immediate when it has fired).
LOCATOR_READS = ("count", "all", "inner_text", "inner_html", "text_content", "all_inner_texts",
                 "all_text_contents", "is_visible", "is_hidden", "is_checked", "is_enabled",
                 "is_disabled", "get_attribute", "input_value")
PAGE_READS = ("content", "inner_text", "text_content", "is_visible", "is_hidden", "is_checked",
              "get_attribute", "input_value", "evaluate")


def _after_load(read: Callable, page_of: Callable) -> Callable:
    @wraps(read)
    def waiting(self, *args, **kwargs):
        page_of(self).wait_for_load_state("load")
        return read(self, *args, **kwargs)
    return waiting


def _reads_wait_for_load(patch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import Locator, Page

    for name in LOCATOR_READS:
        patch.setattr(Locator, name, _after_load(getattr(Locator, name), lambda loc: loc.page))
    for name in PAGE_READS:
        patch.setattr(Page, name, _after_load(getattr(Page, name), lambda page: page))


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server) -> Iterator[object]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844},
                                  is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def screenshot(page, name: str) -> Path:
    """Save the whole page to artifacts/screenshots/<name>.png, for a person to look at.
    Chromium now and then answers "Unable to capture screenshot" on a loaded machine (the
    compositor had no frame ready): tried again after a pause, then the visible part only.
    A picture is evidence, never an assertion: if none comes, the test goes on and says so."""
    from playwright.sync_api import Error as PlaywrightError

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    last: Exception | None = None
    for attempt, full_page in enumerate((True, True, True, False)):
        try:
            page.screenshot(path=str(path), full_page=full_page)
            return path
        except PlaywrightError as error:
            last = error
            page.wait_for_timeout(250 * (attempt + 1))
    warnings.warn(f"no screenshot {name}: {last}", stacklevel=2)
    return path


# The password tests.builders.make_user gives every user it makes.
BUILDER_PASSWORD = "pw-for-tests"


def log_in(page, email: str, password: str = BUILDER_PASSWORD) -> None:
    """Log in through the log-in page, as a customer does."""
    page.goto("/login/")
    page.locator("#id_username").fill(email)
    page.locator("#id_password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def demo_staff_page(browser, live_server, viewport: dict, language: str):
    """A page of a new browser context (its size and language) logged in to the admin as
    the demo's staff user (seed_demo's): the staff pages' layout tests start here."""
    from billing.management.commands.seed_demo import STAFF_EMAIL, STAFF_PASSWORD

    context = browser.new_context(base_url=live_server.url, viewport=viewport, locale=language)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/admin/")
    page.fill("#id_username", STAFF_EMAIL)
    page.fill("#id_password", STAFF_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_load_state()
    return page


def no_horizontal_scroll(page) -> bool:
    """Nothing wider than the device's screen. Against its width: a mobile browser widens
    its layout viewport (``innerWidth``) to fit content that overflows, hiding it there."""
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
