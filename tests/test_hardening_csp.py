"""Content-Security-Policy (django-csp): a strict header on every page, templates
without inline script or style, and a real Chromium that reports no violation while
the portal and the staff pages work."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import Client

from billing import access
from billing.management.commands.seed_demo import (
    CUSTOMER_EMAIL,
    CUSTOMER_PASSWORD,
    STAFF_EMAIL,
    STAFF_PASSWORD,
)
from tests.browser import screenshot

EXPECTED_DIRECTIVES = {
    "default-src": "'self'", "script-src": "'self'", "style-src": "'self'", "img-src": "'self' data:",
    "object-src": "'none'", "base-uri": "'none'", "frame-ancestors": "'none'", "form-action": "'self'",
}
# What a strict policy blocks in a page: inline <script> (a JSON data block is no
# script), <style> elements, style="" attributes and on*="" handlers.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle=|\son[a-z]+=", re.I)


def directives(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    parts = [p.strip().split(None, 1) for p in header.split(";") if p.strip()]
    return {p[0]: p[1] if len(p) > 1 else "" for p in parts}


def assert_strict(response, path: str) -> None:
    policy = directives(response)
    for name, value in EXPECTED_DIRECTIVES.items():
        assert policy.get(name) == value, (path, name, policy)
    assert "unsafe" not in response["Content-Security-Policy"], path


def assert_no_inline(response, path: str) -> None:
    html = response.content.decode()
    assert not INLINE_SCRIPT.search(html), (path, INLINE_SCRIPT.search(html))
    assert not INLINE_STYLE.search(html), (path, INLINE_STYLE.search(html).group(0))


@pytest.fixture
def seeded(db, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=None)


def logged_in(email: str, password: str, login_path: str = "/login/") -> Client:
    client = Client()
    response = client.post(login_path, {"username": email, "password": password})
    assert response.status_code == 302, response.content.decode()[:500]
    return client


def portal_paths() -> list[str]:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username=CUSTOMER_EMAIL)
    account_id = access.get_account_id_for_user(user.pk)
    sub = next(s for s in access.get_subscriptions_by_account(account_id) if s.SKU == "NEWS-DAILY")
    return ["/", "/subscribe/", "/receipts/", f"/subscriptions/{sub.sub_id}/",
            f"/subscriptions/{sub.sub_id}/card/", f"/subscriptions/{sub.sub_id}/payment-day/", "/password/change/"]


def test_anonymous_pages_carry_a_strict_policy(db) -> None:
    client = Client()
    for path in ["/", "/login/", "/signup/", "/password/reset/", "/admin/login/", "/no-such-page/"]:
        response = client.get(path)
        assert response.status_code in (200, 404), path
        assert_strict(response, path)
        assert_no_inline(response, path)


def test_customer_pages_carry_a_strict_policy(seeded) -> None:
    client = logged_in(CUSTOMER_EMAIL, CUSTOMER_PASSWORD)
    for path in portal_paths():
        response = client.get(path)
        assert response.status_code == 200, path
        assert_strict(response, path)
        assert_no_inline(response, path)


def test_a_receipt_page_has_no_inline_handler(seeded) -> None:
    client = logged_in(CUSTOMER_EMAIL, CUSTOMER_PASSWORD)
    receipts = client.get("/receipts/").content.decode()
    receipt_path = re.search(r'href="(/receipts/[^"/]+/)"', receipts).group(1)
    response = client.get(receipt_path)
    assert response.status_code == 200
    assert_strict(response, receipt_path)
    assert_no_inline(response, receipt_path)
    assert "js/print.js" in response.content.decode()


def test_staff_pages_carry_a_strict_policy(seeded) -> None:
    client = logged_in(STAFF_EMAIL, STAFF_PASSWORD, "/admin/login/")
    lookup = client.get("/admin/staff/", {"email": CUSTOMER_EMAIL})
    assert lookup.status_code == 302  # to the customer's billing page
    paths = ["/admin/", "/admin/staff/", "/admin/staff/upcoming/", "/admin/staff/runs/", "/admin/staff/products/",
             "/admin/staff/products/add/", "/admin/auth/user/", lookup["Location"]]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        assert_strict(response, path)
        assert_no_inline(response, path)


def test_server_error_page_has_no_inline_style(db) -> None:
    from django.test import RequestFactory

    from billing.views import server_error

    response = server_error(RequestFactory().get("/"))
    assert_no_inline(response, "500")
    assert "css/error.css" in response.content.decode()


# --- in a real browser -----------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_chromium_reports_no_policy_violation(page, moto_table, settings) -> None:
    """Chromium logs every blocked script, style or handler on the console: none may
    appear while a customer and a staff user use the pages whose scripts matter."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("seed_demo", stdout=None)
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)

    page.goto("/login/")
    page.locator("#id_username").fill(CUSTOMER_EMAIL)
    page.locator("#id_password").fill(CUSTOMER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")
    page.get_by_role("link", name="Receipts").first.click()
    page.locator("[data-testid=receipt-month] a").first.click()
    # The Print button's handler comes from static/js/print.js.
    page.evaluate("window.print = () => { window.rpayPrinted = true; }")
    page.get_by_role("button", name="Print").click()
    assert page.evaluate("window.rpayPrinted === true")
    # Bootstrap's JavaScript still works: the phone-width menu opens.
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("button", name="Toggle navigation").click()
    page.locator("#nav.show").wait_for()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/subscribe/")
    page.get_by_role("button", name="Log out").click()

    page.goto("/admin/login/")
    page.fill("#id_username", STAFF_EMAIL)
    page.fill("#id_password", STAFF_PASSWORD)
    page.click("input[type=submit]")
    page.goto("/admin/staff/upcoming/")
    # a function, not an expression string: a string is eval'd in the page, which its CSP forbids
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('upcoming-counts'))")
    # The chart's box gets its height from static/staff/staff.css, not a style attribute.
    assert page.evaluate("document.querySelector('.chart-counts').getBoundingClientRect().height") == 280
    page.goto("/admin/staff/")
    page.goto("/admin/auth/user/")
    page.get_by_role("button", name="Log out").click()

    # the lock-out pages, in each log-in page's look
    # (the portal's submit is the log-in form's, in the page's main part: the header's
    # language switcher has submit buttons too, hidden in its closed menu)
    for login_path, submit, name in [("/login/", "main button[type=submit]", "portal-lockout"),
                                     ("/admin/login/", "input[type=submit]", "admin-lockout")]:
        for _ in range(settings.AXES_FAILURE_LIMIT + 1):
            page.goto(login_path)
            page.fill("#id_username", STAFF_EMAIL)
            page.fill("#id_password", "not-the-password")
            page.click(submit)
        assert "is paused for 15 minutes" in page.get_by_test_id("lockout-message").inner_text()
        screenshot(page, name)
    assert violations == []
