"""Switching to a yearly price in a real Chromium on a 390 px phone: the prices in words,
the confirm page (the new price, the new period, the charge) without sideways scrolling,
and the amount read on it is the amount charged.

Screenshots go to artifacts/screenshots/plans-switch-yearly-*.png.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from billing import access
from billing.actions import prices as price_actions
from billing.actions import subscriptions as actions
from billing.rules.pricing import PriceTerms
from core.money import format_with_symbol
from core.pages import today
from core.payments.gateway import get_gateway
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import card, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_monthly_to_yearly_on_a_phone(phone_page, moto_table, live_server) -> None:
    page = phone_page
    access.create_product("MAG", "Magazine", 1000, "USD")
    price_actions.add_price("MAG", PriceTerms("USD", unit_amount=Decimal(12000), interval="year"), actor="t")
    email = "yearly-switch@example.com"
    account = access.create_account(email, user_id=make_user(email).pk)
    sub = actions.subscribe(account, sku="MAG", product_name="Magazine", payment_day=today().day, amount=1000,
                            currency="USD", card=card(), today=today(), actor=email).sub
    log_in(page, email)
    page.goto(f"/subscriptions/{sub.sub_id}/switch/")
    page.get_by_label(re.compile(r"Magazine — \$120\.00 a year \(from today\)")).check()
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-switch-yearly-choose-phone")
    page.get_by_role("button", name="See the amounts").click()
    expect(page.get_by_test_id("new-price")).to_contain_text("$120.00 a year")
    expect(page.get_by_test_id("new-period")).to_contain_text("A new billing period starts today")
    due = page.get_by_test_id("due-now").inner_text()
    assert no_horizontal_scroll(page)
    screenshot(page, "plans-switch-yearly-quote-phone")
    page.get_by_role("button", name=re.compile("Switch and pay")).click()
    expect(page.locator("body")).to_contain_text("You now have Magazine")
    charged = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    assert [format_with_symbol(c["amount"], "USD") for c in charged] == [due]
