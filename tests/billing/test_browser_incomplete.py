"""An incomplete subscription (its first payment waits for the bank) finished from the
dashboard's Finish payment link in a real Chromium, on a 390 px phone and a desktop, on
the simulated gateway (its 3-D Secure card asks on-session too).

Screenshots go to artifacts/screenshots/incomplete-*.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from billing import access
from billing.actions import subscriptions as actions
from core.pages import today
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import card, fresh, make_user, receipts_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def incomplete_subscriber(email: str):
    user = make_user(email)
    account = access.create_account(email, user_id=user.pk)
    started = actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=today().day,
                                amount=999, currency="USD", card=card(AUTHENTICATING_TEST_CARD), today=today(),
                                actor=email)
    assert started.awaits_authentication and fresh(started.sub).Status == "incomplete"
    return started.sub


@pytest.mark.parametrize("device", ["phone_page", "page"])
def test_finish_payment_from_the_dashboard(request, device, moto_table, live_server) -> None:
    page = request.getfixturevalue(device)
    tag = "phone" if device == "phone_page" else "desktop"
    sub = incomplete_subscriber(f"{tag}@example.com")
    log_in(page, f"{tag}@example.com")
    page.goto("/")
    badge = page.get_by_test_id("sub-status")
    assert badge.get_attribute("data-state") == "incomplete"
    expect(page.get_by_test_id("incomplete")).to_contain_text("has not started yet")
    assert page.get_by_test_id("paid-through").count() == 0
    assert page.get_by_test_id("monthly-total").inner_text() == "—"
    assert no_horizontal_scroll(page)
    screenshot(page, f"incomplete-dashboard-{tag}")

    page.get_by_test_id("finish-payment").click()
    expect(page.get_by_test_id("first-payment")).to_contain_text("Until you do, the subscription has not started")
    assert no_horizontal_scroll(page)
    screenshot(page, f"incomplete-finish-{tag}")
    page.get_by_role("button", name="Confirm with my bank").click()
    expect(page.locator("body")).to_contain_text("You are subscribed to Daily News")
    assert page.get_by_test_id("sub-status").get_attribute("data-state") == "active"
    assert len(receipts_of(sub)) == 1 and fresh(sub).Status == "active"
    page.goto("/")
    assert page.get_by_test_id("monthly-total").inner_text() == "$9.99"
    assert page.get_by_test_id("finish-payment").count() == 0
    screenshot(page, f"incomplete-started-{tag}")
