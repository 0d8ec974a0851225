"""Staff in a real Chromium: log in to the admin, find the demo customer, cancel a
subscription through its confirm page, see the audit event; the upcoming chart draws."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from billing.management.commands.seed_demo import CUSTOMER_EMAIL, STAFF_EMAIL, STAFF_PASSWORD
from tests.browser import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_finds_a_customer_and_cancels_a_subscription(page, moto_table, live_server) -> None:
    call_command("seed_demo", stdout=None)
    page.goto("/admin/")
    page.fill("#id_username", STAFF_EMAIL)
    page.fill("#id_password", STAFF_PASSWORD)
    page.click("input[type=submit]")
    page.get_by_role("link", name="Find a customer").first.click()
    screenshot(page, "staff-lookup")

    page.fill("#id_email", CUSTOMER_EMAIL)
    page.click("input[value=Find]")
    page.wait_for_url("**/admin/staff/accounts/**")
    subs = page.get_by_test_id("subscriptions")
    # the demo customer's five: one action required, one incomplete (its first payment waits)
    assert subs.locator("tbody tr").count() == 5
    assert subs.locator('[data-testid="sub-status"][data-state="action_required"]').count() == 1
    assert subs.locator('[data-testid="sub-status"][data-state="incomplete"]').count() == 1
    assert page.get_by_test_id("receipts").locator("tbody tr").count() >= 6
    screenshot(page, "staff-billing-page")

    first = subs.locator("tbody tr").filter(has=page.get_by_role("link", name="Cancel")).first  # a live one
    product = first.locator("td").first.inner_text().splitlines()[0]
    row = first.get_attribute("data-testid")  # that row, wherever it sorts
    first.get_by_role("link", name="Cancel").click()
    expect(page.locator("body")).to_contain_text("Cancel this subscription?")
    screenshot(page, "staff-cancel-confirm")
    page.click("input[value='Cancel subscription']")

    page.wait_for_url("**/admin/staff/accounts/**")
    assert "cancelled" in page.locator(".messagelist").inner_text()
    assert product in page.locator(".messagelist").inner_text()
    events = page.get_by_test_id("events")
    assert "staff.cancel_subscription" in events.inner_text()
    assert STAFF_EMAIL in events.inner_text()
    assert page.get_by_test_id(row).locator(".badge").first.inner_text() == "cancelled"
    screenshot(page, "staff-after-cancel")

    page.get_by_role("link", name="Upcoming").first.click()
    # a function, not an expression string: a string is eval'd in the page, which its CSP forbids
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('upcoming-counts'))")
    assert page.evaluate("Chart.getChart(document.getElementById('upcoming-counts')).data.labels.length") == 30
    screenshot(page, "staff-upcoming")
