"""Plans that change in a real Chromium on a 390 px phone: switch up (the
signed amounts, then charged) and down (from the next payment) from the portal; subscribe
with a free trial and a coupon (nothing charged today, the discount shown); the amounts
read on the pages are what the payment run then charges (an upgrade in a trial, a coupon).

Screenshots go to artifacts/screenshots/plans-*.png.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from billing import access
from billing.actions import subscriptions as actions
from billing.operations import payments
from billing.rules.projection import owed_charge
from core.pages import today
from core.payments.gateway import get_gateway
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import card, fresh, make_user

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


def test_the_amounts_read_in_chromium_are_the_amounts_charged(phone_page, moto_table, live_server) -> None:
    """An amount off for ever, and an upgrade during a free trial: the dashboard's next
    payments and the switch confirm page, read in Chromium, then the payment run on each
    date they name (``rules.projection`` is what both use)."""
    page = phone_page
    catalog()
    access.create_product("GYM-PLUS", "City Gym Plus", 4000, "USD")
    access.create_coupon("FIVE", amount_off=500, currency="USD", duration="forever", actor="staff")
    email = "ledger@example.com"
    account = access.create_account(email, user_id=make_user(email).pk)
    day = (today() + timedelta(days=10)).day
    couponed = actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=day, amount=999,
                                 currency="USD", card=card(), today=today(), actor=email,
                                 coupon=access.get_coupon("FIVE")).sub
    trial = actions.subscribe(access.get_account(account.account_id), sku="GYM-TRIAL", product_name="City Gym",
                              payment_day=day, amount=2500, currency="USD", card=card(), today=today(), actor=email,
                              trial_days=14).sub
    log_in(page, email)

    page.goto(f"/subscriptions/{trial.sub_id}/")
    page.get_by_role("link", name="Switch product").click()
    page.get_by_label(re.compile(r"City Gym Plus — \$40\.00 a month \(upgrade")).check()
    page.get_by_role("button", name="See the amounts").click()
    expect(page.get_by_test_id("due-now")).to_have_text("$0.00")
    said = re.search(r"is (\$[\d.,]+);", page.get_by_test_id("next-payment").inner_text())[1]
    screenshot(page, "plans-trial-upgrade-phone")
    page.get_by_role("button", name="Switch", exact=True).click()
    expect(page.locator("body")).to_contain_text("You now have City Gym Plus")
    assert get_gateway().charges_made(sub_id=trial.sub_id) == []  # the trial's days are free

    page.goto("/")
    rows = page.get_by_test_id("upcoming").locator("li")
    shown = [(rows.nth(n).inner_text().split(" · ")[1].split("\n")[0].split("$")[0].strip(),
              rows.nth(n).get_by_test_id("upcoming-amount").inner_text()) for n in range(3)]
    # the payment run on each date, for each subscription: what it charges is what was shown
    charged = []
    for _ in range(4):
        for tracked in (couponed, trial):
            sub = fresh(tracked)
            out = payments.take_payment(sub, run_date=owed_charge(sub).date)
            charged.append((sub.sub_id, out.due, out.amount))
    charges = sorted(charged, key=lambda c: (c[1], c[0]))
    names = {couponed.sub_id: "Daily News", trial.sub_id: "City Gym Plus"}
    assert [(name, amount) for name, amount in shown] == [(names[s], f"${a / 100:.2f}") for s, _, a in charges[:3]]
    first_trial = next(a for s, _, a in charges if s == trial.sub_id)
    assert said == f"${first_trial / 100:.2f}"


def test_an_add_on_on_a_phone(phone_page, moto_table, live_server) -> None:
    """The add-ons page on a 390 px phone: the add-on chosen, the next payment shown before
    it is confirmed, the subscription page naming it; that payment is what the run takes."""
    page = phone_page
    catalog()
    access.create_product("PRINT-WEEKEND", "Weekend print edition", 400, "USD", add_on=True)
    email = "addons-phone@example.com"
    account = access.create_account(email, user_id=make_user(email).pk)
    sub = actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=today().day,
                            amount=999, currency="USD", card=card(), today=today(), actor=email).sub
    log_in(page, email)
    page.goto(f"/subscriptions/{sub.sub_id}/")
    page.get_by_role("link", name="Add-ons").click()
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-add-ons-phone")
    page.get_by_role("button", name="Add Weekend print edition").click()
    expect(page.get_by_test_id("add-on-change")).to_contain_text("Nothing is charged now")
    expect(page.get_by_test_id("next-payment")).to_contain_text("$13.99")
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-add-on-confirm-phone")
    page.get_by_role("button", name="Add Weekend print edition").click()
    expect(page.get_by_test_id("add-ons")).to_contain_text("Weekend print edition: $4.00 a month, from")
    assert no_horizontal_scroll(page)
    assert payments.next_charge(fresh(sub)).amount == 1399
