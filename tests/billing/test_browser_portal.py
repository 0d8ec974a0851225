"""The customer portal in a real Chromium: sign up, subscribe, manage, receipts.

Screenshots of every page go to artifacts/screenshots/portal-*.png.
"""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from billing import access
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.signup import confirm_link

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EMAIL = "zoe@example.com"
PASSWORD = "zoe-Long-password-2026"




def test_customer_journey(page, phone_page, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=StringIO())

    page.goto("/")
    screenshot(page, "portal-landing")
    page.get_by_role("link", name="Sign up").last.click()
    page.locator("#id_email").fill(EMAIL)
    screenshot(page, "portal-signup")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_test_id("signup-check-email")).to_be_visible()
    # the link the e-mail carries: the password is chosen there, and the account opens
    page.goto(confirm_link(EMAIL))
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    screenshot(page, "portal-signup-password")
    page.get_by_role("button", name="Open my account").click()

    # subscribe, step 1: first an invalid card, which must not come back in the form
    page.get_by_label("Daily News digital — $9.99 a month").check()
    page.get_by_label("Payment day").select_option("31")
    page.get_by_label("Card number").fill("4242 4242 4242 4241")
    page.get_by_label("Expiry month").select_option("12")
    page.get_by_label("Expiry year").select_option("2030")
    page.get_by_label("Security code (CVC)").fill("123")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("body")).to_contain_text("That card number is not valid")
    assert page.get_by_label("Card number").input_value() == ""
    screenshot(page, "portal-subscribe-error")
    page.get_by_label("Card number").fill("4242 4242 4242 4242")
    page.get_by_label("Security code (CVC)").fill("123")
    page.get_by_label("Name on card (optional)").fill("Zoe Example")
    page.get_by_role("button", name="Continue").click()

    # step 2: what is charged today and the next payment date before confirming (M1:
    # paid in advance, the first period charged at once; was the first payment and reminder)
    assert page.get_by_test_id("first-payment").inner_text()
    assert page.get_by_test_id("first-charge").inner_text().startswith("$")
    screenshot(page, "portal-subscribe-confirm")
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    expect(page.locator("body")).to_contain_text("You are subscribed to Daily News digital")
    screenshot(page, "portal-subscription")

    page.get_by_role("link", name="Subscriptions").first.click()
    card = page.get_by_test_id("subscription")
    assert "Daily News digital" in card.inner_text() and "Visa ···· 4242" in card.inner_text()
    screenshot(page, "portal-dashboard-new")

    # change the payment day
    page.get_by_role("link", name="Manage Daily News digital").click()
    page.get_by_role("link", name="Change the payment day").click()
    screenshot(page, "portal-change-day")
    page.get_by_label("New payment day").select_option("10")
    page.get_by_role("button", name="Change the day").click()
    # the next payment keeps its date and is prorated up to the new day
    expect(page.locator("body")).to_contain_text(re.compile(r"Your payment day is now the 10th\. The days you paid for stay paid"))

    # replace the card
    page.get_by_role("link", name="Replace the card").click()
    page.get_by_label("Card number").fill("5555 5555 5555 4444")
    page.get_by_label("Expiry month").select_option("6")
    page.get_by_label("Expiry year").select_option("2031")
    page.get_by_label("Security code (CVC)").fill("321")
    screenshot(page, "portal-replace-card")
    page.get_by_role("button", name="Use this card").click()
    expect(page.locator("body")).to_contain_text("Mastercard ending in 4444")
    account_id = access.get_account_id_for_user(
        __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model()
        .objects.get(username=EMAIL).pk)
    [sub] = access.get_subscriptions_by_account(account_id)
    assert sub.PaymentDay == 10 and sub.PaymentDetails.Last4 == "4444"

    # cancel
    page.get_by_role("link", name="Cancel the subscription").click()
    screenshot(page, "portal-cancel")
    # at the end of the period paid is the default; a reason is asked for
    page.get_by_label("I am not using it").check()
    page.get_by_role("button", name="Cancel the subscription").click()
    assert "Cancels on" in page.get_by_test_id("sub-state").inner_text()
    assert page.get_by_role("button", name="Keep my subscription").is_visible()
    page.goto(f"/subscriptions/{sub.sub_id}/cancelled/")
    # the first period was paid at subscribing, and the service runs to its end
    assert "The last period paid was" in page.get_by_test_id("last-period").inner_text()
    screenshot(page, "portal-cancelled")
    page.goto("/")
    # a cancel at period end is listed with the live ones (it runs until then), not under "Cancelled"
    assert page.get_by_test_id("sub-status").get_attribute("data-state") == "cancelling"
    expect(page.locator("body")).not_to_contain_text("Cancelled subscriptions")

    # log out, log in as the seeded customer: receipts
    page.get_by_role("button", name="Log out").click()
    assert page.get_by_role("link", name="Sign up").first.is_visible()
    log_in(page, "customer@rpay.localhost", "customer-demo-2026")
    # The demo: three live subscriptions (one paused, one waiting for the bank: action
    # required), one cancelled at the end of its period and one whose first payment waits
    # for the bank (incomplete), all five listed, each with its one state.
    assert page.get_by_test_id("subscription").count() == 5
    expect(page.get_by_test_id("action-required")).to_contain_text("Action required for Coffee beans monthly box")
    expect(page.get_by_test_id("incomplete")).to_contain_text("Daily News Plus")
    expect(page.locator("body")).not_to_contain_text("Cancelled subscriptions")
    screenshot(page, "portal-dashboard")
    page.get_by_role("link", name="Receipts").first.click()
    assert page.get_by_test_id("receipt-month").count() >= 6
    screenshot(page, "portal-receipts")
    page.locator("[data-testid=receipt-month] a").first.click()
    assert page.get_by_test_id("receipt-amount").inner_text().startswith(("$", "€"))
    screenshot(page, "portal-receipt")
    page.emulate_media(media="print")
    assert not page.locator("nav.navbar").is_visible()
    screenshot(page, "portal-receipt-print")
    page.emulate_media(media="screen")
    page.goto("/password/change/")
    screenshot(page, "portal-password-change")

    # the phone: no horizontal scroll on the dashboard, receipts and subscribe
    log_in(phone_page, "customer@rpay.localhost", "customer-demo-2026")
    assert phone_page.get_by_test_id("subscription").count() == 5  # with the cancelling and the incomplete
    assert no_horizontal_scroll(phone_page)
    screenshot(phone_page, "portal-dashboard-phone")
    for path, name in [("/receipts/", "portal-receipts-phone"), ("/subscribe/", "portal-subscribe-phone")]:
        phone_page.goto(path)
        assert no_horizontal_scroll(phone_page), path
        screenshot(phone_page, name)


def test_keyboard_only_log_in(page, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=StringIO())
    page.goto("/login/")
    page.locator("#id_username").focus()
    page.keyboard.type("customer@rpay.localhost")
    page.keyboard.press("Tab")
    page.keyboard.type("customer-demo-2026")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"://[^/]+/$"))
    assert page.get_by_test_id("subscription").count() == 5  # the demo: three live, one cancelling, one incomplete
