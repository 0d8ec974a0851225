"""Plans that change (issue 30) in a real Chromium on a 390 px phone: switch up (the
signed amounts, then charged) and down (from the next payment) from the portal; subscribe
with a free trial and a coupon (nothing charged today, the discount shown).

Screenshots go to artifacts/screenshots/plans-*.png.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from billing import access
from billing.actions import subscriptions as actions
from core.pages import today
from core.payments.gateway import get_gateway
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import card, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]




def catalog() -> None:
    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    access.create_product("NEWS-PLUS", "Daily News Plus", 1999, "USD")
    access.create_product("NEWS-LITE", "Daily News Lite", 499, "USD")
    access.create_product("GYM-TRIAL", "City Gym", 2500, "USD", trial_days=14)
    access.create_coupon("WELCOME20", percent_off=20, actor="staff")


def test_switch_up_and_down_on_a_phone(phone_page, moto_table, live_server) -> None:
    page = phone_page
    catalog()
    email = "switcher@example.com"
    account = access.create_account(email, user_id=make_user(email).pk)
    day = (today() + timedelta(days=10)).day  # paid ten days ahead: an upgrade settles them
    subs = [actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=day, amount=999,
                              currency="USD", card=card(), today=today(), actor=email).sub for _ in range(2)]
    log_in(page, email)

    page.goto(f"/subscriptions/{subs[0].sub_id}/")
    page.get_by_role("link", name="Switch product").click()
    page.get_by_label(re.compile(r"Daily News Plus — \$19\.99 a month \(upgrade")).check()
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-switch-choose-phone")
    page.get_by_role("button", name="See the amounts").click()
    quote = page.get_by_test_id("switch-quote")
    expect(quote).to_contain_text("Charged now")
    due = page.get_by_test_id("due-now").inner_text()
    assert due.startswith("$") and due != "$0.00"
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-switch-quote-phone")
    page.get_by_role("button", name=re.compile("Switch and pay")).click()
    expect(page.locator("body")).to_contain_text("You now have Daily News Plus")
    charged = [c for c in get_gateway().charges_made(sub_id=subs[0].sub_id) if c["metadata"].get("kind") == "switch"]
    assert [f"${c['amount'] / 100:.2f}" for c in charged] == [due]

    page.goto(f"/subscriptions/{subs[1].sub_id}/")
    page.get_by_role("link", name="Switch product").click()
    page.get_by_label(re.compile(r"Daily News Lite — \$4\.99 a month \(from your next payment")).check()
    page.get_by_role("button", name="See the amounts").click()
    expect(page.get_by_test_id("switch-quote")).to_contain_text("Nothing is charged or refunded now")
    page.get_by_role("button", name="Switch", exact=True).click()
    expect(page.locator("body")).to_contain_text("you will have Daily News Lite")
    expect(page.get_by_test_id("switch-pending")).to_contain_text("You have Daily News until your next payment")
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-switch-down-phone")
    assert access.get_subscription(account.account_id, subs[1].sub_id).PaymentAmount == 499


def test_subscribe_with_a_trial_and_a_coupon_on_a_phone(phone_page, moto_table, live_server) -> None:
    page = phone_page
    catalog()
    email = "trial@example.com"
    access.create_account(email, user_id=make_user(email).pk)
    log_in(page, email)
    page.goto("/subscribe/")
    page.get_by_label(re.compile("City Gym — \\$25\\.00 a month · 14-day free trial")).check()
    page.get_by_label("Coupon code (optional)").fill("welcome20")
    page.get_by_label("Card number").fill("4242 4242 4242 4242")
    page.get_by_label("Expiry month").select_option("12")
    page.get_by_label("Expiry year").select_option("2030")
    page.get_by_label("Security code (CVC)").fill("123")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_test_id("trial")).to_contain_text("Free until")
    expect(page.get_by_test_id("discount")).to_contain_text("−$")
    assert page.get_by_test_id("first-charge").first.inner_text().startswith("$0.00")
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-trial-coupon-confirm-phone")
    page.get_by_role("button", name="Start the free trial").click()
    expect(page.locator("body")).to_contain_text("Your free trial runs until")
    [sub] = access.get_subscriptions_by_account(access.get_account_id_for_user(
        __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model().objects.get(email=email).pk))
    assert sub.TrialEnd and sub.CouponCode == "WELCOME20" and sub.CouponPercentOff == 20
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []  # nothing charged today
