"""Cancel at period end, keep, pause, resume and cancel now in a real Chromium, on a
desktop and on a 390 px phone; staff pause and resume from the account page.

Screenshots go to artifacts/screenshots/lifecycle-*.png.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from playwright.sync_api import expect

from billing import access
from billing.actions import subscriptions as actions
from core.pages import today
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import card, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-for-tests"



def paid_subscriber(email: str):
    """A customer whose first period (to the day before a payment day ten days on) is
    paid, so that ending at the period's end and pausing are both offered."""
    user = make_user(email)
    account = access.create_account(email, user_id=user.pk)
    day = (today() + timedelta(days=10)).day
    started = actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=day, amount=999,
                                currency="USD", card=card(), today=today(), actor=email)
    assert started.started
    return started.sub



@pytest.mark.parametrize("device", ["page", "phone_page"])
def test_cancel_keep_pause_resume_and_cancel_now(request, device, moto_table, live_server) -> None:
    page = request.getfixturevalue(device)
    tag = "phone" if device == "phone_page" else "desktop"
    sub = paid_subscriber(f"{tag}@example.com")
    mail.outbox.clear()
    log_in(page, f"{tag}@example.com")
    page.goto(f"/subscriptions/{sub.sub_id}/")

    # cancel: at the end of the period paid is the default; a reason and a comment
    page.get_by_role("link", name="Cancel the subscription").click()
    assert page.locator("input[name=when][value=period_end]").is_checked()
    page.get_by_label("It is too expensive").check()
    page.get_by_label("Anything you would like to tell us (optional)").fill("Cheaper elsewhere")
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-cancel-{tag}")
    page.get_by_role("button", name="Cancel the subscription").click()
    assert page.get_by_test_id("sub-state").inner_text().startswith("Cancels on")
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-cancelling-{tag}")
    stored = access.get_subscription(sub.account_id, sub.sub_id)
    assert stored.CancelReason == "too_expensive" and stored.CancelComment == "Cheaper elsewhere"

    # keep
    page.get_by_role("button", name="Keep my subscription").click()
    expect(page.locator("body")).to_contain_text("Your subscription continues")
    assert page.get_by_test_id("sub-state").count() == 0
    assert access.get_subscription(sub.account_id, sub.sub_id).NextPaymentDate

    # pause for two payments, resume
    page.get_by_role("link", name="Pause payments").click()
    page.get_by_label("for a number of payments").check()
    page.get_by_label("Payments to skip").select_option("2")
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-pause-{tag}")
    page.get_by_role("button", name="Pause payments").click()
    assert page.get_by_test_id("sub-state").inner_text().startswith("Paused until")
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-paused-{tag}")
    page.get_by_role("button", name="Resume now").click()
    expect(page.locator("body")).to_contain_text("Resumed. The next payment is")

    # an open pause: "Paused", no payment day to change, then resume
    page.get_by_role("link", name="Pause payments").click()
    page.get_by_label("until I resume it").check()
    page.get_by_role("button", name="Pause payments").click()
    assert page.get_by_test_id("sub-state").inner_text() == "Paused"
    assert page.get_by_role("link", name="Change the payment day").count() == 0
    page.goto("/")
    assert page.get_by_test_id("sub-state").inner_text() == "Paused"
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-dashboard-paused-{tag}")
    page.get_by_role("link", name="Manage Daily News").click()
    page.get_by_role("button", name="Resume now").click()
    expect(page.locator("body")).to_contain_text("Resumed")

    # cancel now: the days paid after today are refunded
    page.get_by_role("link", name="Cancel the subscription").click()
    page.locator("input[name=when][value=now]").check()
    page.get_by_label("I am switching to something else").check()
    page.get_by_role("button", name="Cancel the subscription").click()
    expect(page.locator("body")).to_contain_text("has ended")
    expect(page.locator("body")).to_contain_text("is refunded to your card")
    assert "The last period paid was" in page.get_by_test_id("last-period").inner_text()
    assert no_horizontal_scroll(page)
    screenshot(page, f"lifecycle-cancelled-now-{tag}")

    subjects = [m.subject for m in mail.outbox]
    assert subjects == [
        f"Your Daily News subscription ends on {date_text(stored.PaidThroughDate)}",
        "Your Daily News subscription continues",
        "Your Daily News subscription is paused",
        "Your Daily News subscription is resumed",
        "Your Daily News subscription is paused",
        "Your Daily News subscription is resumed",
        "Refund: Daily News",
        "Your Daily News subscription is cancelled",
    ]


def date_text(iso: str) -> str:
    from datetime import date

    return f"{date.fromisoformat(iso):%-d %B %Y}"


def test_staff_pause_and_resume(page, moto_table, live_server) -> None:
    sub = paid_subscriber("pat@example.com")
    make_user("clerk@rpay.localhost", staff=True)
    page.goto("/admin/")
    page.fill("#id_username", "clerk@rpay.localhost")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"/admin/staff/accounts/{sub.account_id}/")
    row = page.get_by_test_id(f"sub-{sub.sub_id}")
    row.get_by_role("link", name="Pause").click()
    page.get_by_label("until I resume it").check()
    screenshot(page, "lifecycle-staff-pause")
    page.click("input[value='Pause payments']")
    page.wait_for_url("**/admin/staff/accounts/**")
    assert row.get_by_test_id("sub-status").inner_text() == "Paused"
    assert "staff.pause_subscription" in page.get_by_test_id("events").inner_text()
    screenshot(page, "lifecycle-staff-paused")
    row.get_by_role("link", name="Resume").click()
    page.click("input[value='Resume']")
    page.wait_for_url("**/admin/staff/accounts/**")
    assert row.get_by_test_id("sub-status").get_attribute("data-state") == "active"
    assert "staff.resume_subscription" in page.get_by_test_id("events").inner_text()
    assert access.get_subscription(sub.account_id, sub.sub_id).NextPaymentDate == sub.NextPaymentDate


def test_two_tabs_cancel_now_after_period_end_and_make_default_on_a_removed_card(page, moto_table,
                                                                                  live_server) -> None:
    """Two tabs of one customer: tab 1 cancels at period end, tab 2 (opened before) asks to
    end now: it is told the page changed, sees the subscription as it is now, and its choice
    (now, with the refund) is kept. Then the wallet: a card removed in tab 1, Make default in
    tab 2: the wallet as it is now, not a 404."""
    sub = paid_subscriber("tabs@example.com")
    log_in(page, "tabs@example.com")
    second = page.context.new_page()
    for tab in (page, second):
        tab.goto(f"/subscriptions/{sub.sub_id}/cancel/")
    page.get_by_label("It is too expensive").check()
    page.get_by_role("button", name="Cancel the subscription").click()
    assert page.get_by_test_id("sub-state").inner_text().startswith("Cancels on")

    second.locator("input[name=when][value=now]").check()
    second.get_by_label("It is too expensive").check()
    second.get_by_role("button", name="Cancel the subscription").click()
    expect(second.locator("body")).to_contain_text("This changed since you opened the page")
    expect(second.get_by_test_id("cancelling")).to_contain_text("Cancels on")
    assert second.locator("input[name=when][value=now]").is_checked()
    screenshot(second, "stale-cancel-now")
    second.get_by_role("button", name="Cancel the subscription").click()
    expect(second.locator("body")).to_contain_text("has ended")
    assert access.get_subscription(sub.account_id, sub.sub_id).CancelMode == "now"

    for _ in range(2):
        access.add_card(sub.account_id, card(), None, actor="tabs@example.com")
    for tab in (page, second):
        tab.goto("/wallet/")
    default = access.default_card(access.get_account(sub.account_id), access.get_cards(sub.account_id))
    spare = next(c for c in access.get_cards(sub.account_id) if c is not default and c.card_id != default.card_id)
    page.locator(f"form[action='/wallet/{spare.card_id}/remove/'] button").click()
    second.locator(f"form[action='/wallet/{spare.card_id}/default/'] button").click()
    expect(second.locator("body")).to_contain_text("This changed since you opened the page")
    assert second.locator(f"form[action='/wallet/{spare.card_id}/default/']").count() == 0
    screenshot(second, "stale-make-default")
