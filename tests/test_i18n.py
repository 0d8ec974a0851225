"""Every message translated, the .po files current, and the main pages shown
in Italian, Korean and Chinese without the portal's English phrases."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from billing import access
from tests.builders import subscribe
from tests.shop.test_shop_pages import shop_site, shop_stock  # noqa: F401 - fixtures of the shop page

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import i18n  # noqa: E402 - scripts/i18n.py, the project's translation tool

LANGUAGES = ("it", "ko", "zh-hans")
# The portal's main English phrases: none may be left on a page in another language.
# ("Password" is Italian too, so it is not in the list.)
PHRASES = (
    "Your subscriptions", "Subscribe to a product", "Monthly total", "Next payments", "Payment day",
    "Next payment", "Paid through", "Reminder e-mail", "Manage", "See your receipts", "a month",
    "Change the payment day", "Replace the card", "Cancel the subscription", "Receipts", "Download CSV",
    "Payments from", "the last six months", "Billing period from", "Payment method", "Reference",
    "Subscriptions", "Log out", "Step 1 of 2", "Product and payment day", "Card number",
    "Expiry month", "Security code", "Continue", "Back", "Products", "Cart", "Orders", "Gift card",
    "In stock", "left", "Skip to content", "recurring payments", "Active", "Paid",
)


def test_every_message_of_every_locale_is_translated_and_not_fuzzy() -> None:
    assert i18n.check(ROOT, sources=False) == []


def test_the_po_files_are_current_with_the_sources() -> None:
    if shutil.which("xgettext") is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs GNU gettext (xgettext): .ci/run installs it")
        pytest.skip("GNU gettext (xgettext) is not installed")
    assert i18n.stale(ROOT) == []


def test_the_compiled_catalogs_are_built_from_the_current_po_files() -> None:
    for locale in i18n.LOCALES:
        po = i18n.po_path(locale)
        assert po.with_suffix(".mo").read_bytes() == i18n.compile_mo(po), f"run make: {locale}'s .mo is stale"


def english_left(html: str) -> list[str]:
    text = re.sub(r"<script.*?</script>|<[^>]+>", " ", html, flags=re.S)
    return [p for p in PHRASES if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", text)]


@pytest.fixture
def history(customer):
    sub = subscribe(customer, "NEWS-DAILY", day=15, amount=999, currency="EUR")
    receipt, _ = access.create_receipt(sub, billing_date=access.utc_now().date(), amount=999, currency="EUR",
                                       charge_id="ch_1", retention_days=200)
    return customer, sub, receipt


@pytest.mark.parametrize("language", LANGUAGES)
def test_portal_pages_show_no_english_phrase(history, language) -> None:
    customer, sub, receipt = history
    client: Client = customer.client
    for url in ("/", f"/subscriptions/{sub.sub_id}/", "/receipts/", reverse("receipt", args=[receipt.url_id]), "/subscribe/"):
        html = client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert f'<html lang="{language}">' in html, url
        assert english_left(html) == [], url


@pytest.mark.parametrize("language", LANGUAGES)
def test_shop_catalogue_shows_no_english_phrase(shop_stock, customer, language) -> None:  # noqa: F811
    html = customer.client.get("/shop/", HTTP_ACCEPT_LANGUAGE=language, follow=True).content.decode()
    assert 'data-testid="product-card"' in html
    assert english_left(html) == []


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_the_headers_links_have_distinct_names(customer, language) -> None:
    # Two menu entries translated alike ("Subscriptions" and "Subscribe" were both 订阅)
    # leave the reader guessing which is which.
    html = customer.client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    header = html.split("</nav>")[0]
    names = [name.strip() for name in re.findall(r'class="nav-link"[^>]*>([^<]+)<', header)]
    assert len(names) >= 5 and len(set(names)) == len(names), names


def test_money_and_dates_follow_the_language(history) -> None:
    customer, sub, _ = history
    assert "9,99\xa0€" in customer.client.get("/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    page = customer.client.get(f"/subscriptions/{sub.sub_id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "年" in page and "月" in page and "日" in page
    assert "€9.99" in customer.client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_the_switcher_stores_the_language_on_the_account_and_its_subscriptions(history) -> None:
    customer, sub, _ = history
    response = customer.client.post("/i18n/setlang/", {"language": "ko", "next": "/"})
    assert response.status_code == 302
    assert access.get_account(customer.account_id).Language == "ko"
    assert access.get_user_link(customer.user_id).Language == "ko"
    assert access.get_subscription(customer.account_id, sub.sub_id).Language == "ko"
    # The account's language wins over the browser's on every page, and after a new log-in.
    assert '<html lang="ko">' in customer.client.get("/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    fresh = Client()
    fresh.post("/login/", {"username": customer.email, "password": "a-long-Password-2026"})
    assert '<html lang="ko">' in fresh.get("/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
