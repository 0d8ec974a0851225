"""The home page in a real Chromium, on a desktop and a phone viewport."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_home_page_in_chromium(page, phone_page, moto_table, live_server) -> None:
    call_command("seed_demo", stdout=None)
    page.goto("/")
    # the landing page (it replaced the table overview)
    assert page.get_by_role("link", name="Sign up").first.is_visible()
    # Bootstrap is served from static/ (npm package), not a CDN
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")
    screenshot(page, "home")
    phone_page.goto("/")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(phone_page, "home-phone")
