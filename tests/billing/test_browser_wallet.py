"""The wallet in a real Chromium, desktop and 390 px (add, make default,
replace, refused remove), a subscription's choice of card, the subscribe flow ("Change
details" keeps product and day; "subscribe again?") and the dashboard's next amount.

Screenshots go to artifacts/screenshots/wallet-*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from billing import access
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import make_customer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-Password-2026"




def fill_card(page, number: str, month: str = "12", year: str = "2030") -> None:
    page.get_by_label("Card number").fill(number)
    page.get_by_label("Expiry month").select_option(month)
    page.get_by_label("Expiry year").select_option(year)
    page.get_by_label("Security code (CVC)").fill("123")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_wallet_and_subscribe_flow(request, products, size) -> None:
    page = request.getfixturevalue("page" if size == "desktop" else "phone_page")
    ann = make_customer(f"ann-{size}@example.com")
    log_in(page, ann.email, PASSWORD)

    # subscribe with a new card; "Change details" keeps the product and day
    page.goto("/subscribe/")
    page.get_by_label("City Gym — £45.00 a month").check()
    page.get_by_label("Payment day").select_option("20")
    fill_card(page, "4242 4242 4242 4242")
    page.get_by_label("Billing address (optional)").fill("1 Main St")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("link", name="Change details").click()
    expect(page.get_by_label("City Gym — £45.00 a month")).to_be_checked()
    expect(page.get_by_label("Payment day")).to_have_value("20")
    expect(page.get_by_label("Billing address (optional)")).to_have_value("1 Main St")
    fill_card(page, "4242 4242 4242 4242")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    expect(page.locator("body")).to_contain_text("You are subscribed to City Gym")

    # a second one to the same product is asked about, with the wallet card chosen
    page.goto("/subscribe/")
    page.get_by_label("City Gym — £45.00 a month").check()
    assert page.get_by_label("Visa ending 4242 (12/2030)").is_checked()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_test_id("already-subscribed")).to_contain_text("You already have City Gym; subscribe again?")
    screenshot(page, f"wallet-subscribe-again-{size}")
    assert no_horizontal_scroll(page)
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    expect(page.locator("body")).to_contain_text("Tick the box")
    page.get_by_label("Yes, subscribe again").check()
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    expect(page.locator("body")).to_contain_text("You are subscribed to City Gym")
    assert len(access.get_subscriptions_by_account(ann.account_id)) == 2

    # the dashboard: next payment with its amount, paid-through date
    page.goto("/")
    assert page.get_by_test_id("next-amount").count() == 2
    assert page.get_by_test_id("next-amount").first.inner_text().startswith("£")
    assert page.get_by_test_id("paid-through").count() == 2
    assert no_horizontal_scroll(page)
    screenshot(page, f"wallet-dashboard-{size}")

    # the wallet: one card paying for both; add a second, make it the default
    page.get_by_role("link", name="Wallet").first.click() if size == "desktop" else page.goto("/wallet/")
    # web-first: the click's navigation may not have finished when the next line runs
    expect(page.get_by_test_id("wallet-card")).to_have_count(1)
    page.get_by_role("link", name="Add a card").first.click()
    fill_card(page, "5555 5555 5555 4444", "6", "2031")
    page.get_by_role("button", name="Add the card").click()
    expect(page.locator("body")).to_contain_text("Mastercard ending 4444 (06/2031) is in your wallet.")
    page.get_by_role("button", name="Make default Mastercard 4444").click()
    expect(page.locator("body")).to_contain_text("is now your default card")

    # removing the card in use is refused, with the subscription named
    page.get_by_role("button", name="Remove Visa 4242").click()
    expect(page.locator("body")).to_contain_text("cannot be removed: City Gym, City Gym pays with it")

    # replace the Visa: both subscriptions move; the address is kept
    page.get_by_role("link", name="Replace Visa 4242").click()
    expect(page.get_by_label("Billing address (optional)")).to_have_value("1 Main St")
    fill_card(page, "4000 0566 5566 5556", "9", "2032")
    page.get_by_role("button", name="Use the new card").click()
    expect(page.locator("body")).to_contain_text("It now pays for: City Gym, City Gym.")
    assert no_horizontal_scroll(page)
    screenshot(page, f"wallet-{size}")
    subs = access.get_subscriptions_by_account(ann.account_id)
    assert {s.PaymentDetails.Last4 for s in subs} == {"5556"}
    assert {s.PaymentDetails.BillingAddress for s in subs} == {"1 Main St"}

    # one subscription chooses the Mastercard on its card page
    sub = subs[0]
    page.goto(f"/subscriptions/{sub.sub_id}/card/")
    page.get_by_label("Mastercard ending 4444 (06/2031)").check()
    assert no_horizontal_scroll(page)
    screenshot(page, f"wallet-choose-card-{size}")
    page.get_by_role("button", name="Pay with this card").click()
    expect(page.locator("body")).to_contain_text("Future payments will use your Mastercard ending 4444 (06/2031).")
    assert access.get_subscription(ann.account_id, sub.sub_id).PaymentDetails.Last4 == "4444"
