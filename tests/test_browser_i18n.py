"""In a real Chromium: the dashboard, a receipt and the shop in each language,
at desktop width and at 390 px: no horizontal overflow, CJK text wraps. Screenshots go to
artifacts/screenshots/i18n-<page>-<language>-<width>.png."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access
from tests.browser import screenshot
from tests.builders import TEST_CARD
from tests.shop import test_shop_pages as pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

shop_site = pages.shop_site
shop_stock = pages.shop_stock

PASSWORD = "Lin-long-password-2026"
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}
# A phrase of each page in each language, so the screenshot is known to be translated.
RECEIPTS_HEADING = {"en": "Receipts", "it": "Ricevute", "ko": "영수증", "zh-hans": "收据"}


def wraps(page, selector: str) -> bool:
    """The element's text takes more than one line (it wrapped inside its box)."""
    return page.evaluate(
        """s => { const el = document.querySelector(s); const r = el.getBoundingClientRect();
                  return r.height > parseFloat(getComputedStyle(el).lineHeight) * 1.5 && r.right <= innerWidth; }""",
        selector)


@pytest.mark.parametrize("language", ["en", "it", "ko", "zh-hans"])
def test_pages_in_each_language_fit_the_screen(browser, live_server, shop_stock, language) -> None:
    email = f"lin-{language}@example.com"
    user = get_user_model().objects.create_user(email, email=email, password=PASSWORD)
    account = access.create_account(email, user_id=user.pk, language=language)
    sub = access.create_subscription(account, sku="NEWS-DAILY", payment_day=28, amount=990000, currency="KRW",
                                     card=TEST_CARD, today=access.utc_now().date(), reminder_days_before=7,
                                     product_name="Daily News")
    receipt, _ = access.create_receipt(sub, billing_date=access.utc_now().date(), amount=990000, currency="KRW",
                                       charge_id="ch_browser", retention_days=200)
    for width, viewport in WIDTHS.items():
        context = browser.new_context(base_url=live_server.url, viewport=viewport, locale="en-US")
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto("/login/")
        page.locator("#id_username").fill(email)
        page.locator("#id_password").fill(PASSWORD)
        page.locator("main form button[type=submit]").first.click()
        page.wait_for_load_state()
        for name, url in (("dashboard", "/"), ("receipts", "/receipts/"),
                          ("receipt", reverse("receipt", args=[receipt.url_id])), ("shop", "/shop/")):
            page.goto(url)
            # The account's language, not the browser's (en-US), is the page's.
            assert page.evaluate("document.documentElement.lang") == language, (name, width)
            screenshot(page, f"i18n-{name}-{language}-{width}")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (name, width)
            if name == "receipts":
                assert RECEIPTS_HEADING[language] in page.locator("h1").inner_text()
                if width == "390":
                    # The period sentence is longer than a phone's line in every language.
                    assert wraps(page, "main p.text-muted"), language
            if name == "dashboard":
                assert "990,000" in page.content() or "990.000" in page.content()  # KRW: no decimals
        context.close()
