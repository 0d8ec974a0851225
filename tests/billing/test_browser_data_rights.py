"""Download my data and Close my account in a real Chromium at 390 px, in English and in
Italian (the account's language): each page fits the phone, the ZIP downloads, the close
asks the password and ends on the closed page. Screenshots go to
artifacts/screenshots/rights-<page>-<language>.png."""

from __future__ import annotations

import zipfile

import pytest
from django.contrib.auth import get_user_model

from billing import access
from tests.browser import no_horizontal_scroll, screenshot
from tests.builders import TEST_CARD
from tests.shop import test_shop_pages as pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

shop_site = pages.shop_site  # the shop's table: a close erases the shop's part too
PASSWORD = "Rita-long-password-2026"
HEADINGS = {
    "en": ("Download my data", "Close my account", "Your account is closed"),
    "it": ("Scarica i miei dati", "Chiudi il mio account", "Il tuo account è chiuso"),
}


@pytest.mark.parametrize("language", ["en", "it"])
def test_both_pages_on_a_phone(browser, live_server, shop_site, settings, tmp_path, language) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    email = f"rita-{language}@example.com"
    user = get_user_model().objects.create_user(email, email=email, password=PASSWORD)
    account = access.create_account(email, user_id=user.pk, language=language)
    sub = access.create_subscription(account, sku="NEWS-DAILY", payment_day=28, amount=999, currency="EUR",
                                     card=TEST_CARD, today=access.utc_now().date(), reminder_days_before=7,
                                     product_name="Daily News")
    access.create_receipt(sub, billing_date=access.utc_now().date(), amount=999, currency="EUR",
                          charge_id="ch_browser", retention_days=200)
    data_heading, close_heading, closed_heading = HEADINGS[language]

    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844},
                                  is_mobile=True, has_touch=True, accept_downloads=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/login/")
    page.locator("#id_username").fill(email)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").first.click()
    page.wait_for_load_state()

    page.get_by_test_id("data-rights-links").get_by_role("link", name=data_heading).click()
    assert page.locator("h1").inner_text() == data_heading
    assert page.evaluate("document.documentElement.lang") == language
    assert no_horizontal_scroll(page)
    screenshot(page, f"rights-download-{language}")
    with page.expect_download() as download:
        page.get_by_test_id("download-data-form").locator("button").click()
    path = tmp_path / "data.zip"
    download.value.save_as(path)
    assert {"data.json", "README.txt"} <= set(zipfile.ZipFile(path).namelist())

    page.goto("/")
    page.get_by_test_id("data-rights-links").get_by_role("link", name=close_heading).click()
    assert page.locator("h1").inner_text() == close_heading
    assert no_horizontal_scroll(page)
    screenshot(page, f"rights-close-{language}")
    page.locator("#id_password").fill("not-my-password")
    page.locator("#id_confirm").check()
    page.get_by_test_id("close-account-form").get_by_role("button", name=close_heading).click()
    assert access.get_account(account.account_id).ClosedDate is None
    page.locator("#id_password").fill(PASSWORD)
    page.locator("#id_confirm").check()
    page.get_by_test_id("close-account-form").get_by_role("button", name=close_heading).click()
    page.wait_for_url("**/account/closed/")
    assert page.get_by_test_id("account-closed").inner_text() == closed_heading
    assert no_horizontal_scroll(page)
    screenshot(page, f"rights-closed-{language}")
    assert access.get_account(account.account_id).ClosedDate
    context.close()
