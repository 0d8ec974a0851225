"""In a real Chromium: the billing staff pages in Korean (the longest-running
CJK text) and English, at desktop width and at 390 px: the page itself never scrolls
sideways (a wide table scrolls inside its own box). Screenshots go to
artifacts/screenshots/i18n-staff-<page>-<language>-<width>.png."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from tests.browser import demo_staff_page, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}
# A phrase of the billing page in each language, so the screenshot is known to be translated.
FAILURES_HEADING = {"en": "Payment failures", "ko": "결제 실패"}


@pytest.mark.parametrize("language", ["en", "ko"])
def test_staff_pages_fit_the_screen(browser, moto_table, live_server, language) -> None:
    call_command("seed_demo", stdout=None)
    for width, viewport in WIDTHS.items():
        page = demo_staff_page(browser, live_server, viewport, language)
        page.goto(f"/admin/staff/?email={CUSTOMER_EMAIL}")
        page.wait_for_url("**/admin/staff/accounts/**")
        assert page.evaluate("document.documentElement.lang") == language
        assert FAILURES_HEADING[language] in page.content()
        for name, url in (("account", page.url), ("upcoming", "/admin/staff/upcoming/"),
                          ("runs", "/admin/staff/runs/")):
            page.goto(url)
            page.wait_for_load_state()
            screenshot(page, f"i18n-staff-{name}-{language}-{width}")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (name, width, overflow)
        page.context.close()
