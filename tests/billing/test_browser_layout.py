"""The portal's layout on a 390 px phone, in Italian (the longest words of its languages):
a subscription card with a long product name (no space to break at) and its state's
badge, and an invoice's page, each inside the screen: nothing scrolls sideways, nothing
is cut. Screenshots go to artifacts/screenshots/layout-*.png."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from billing import access
from billing.actions import lifecycle
from billing.models import Subscription
from billing.rules.tax import Buyer, Seller, applicable_rate, tax_line
from core.pages import today
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import PASSWORD, TEST_CARD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EMAIL = "giulia@example.com"
LONG_NAME = "Abbonamento-Premium-Internazionale-Supercalifragilistichespiralidoso-Digitale"
ITALY = Seller(country="IT", vat_number="IT00743110157", registrations={"JP": Decimal("10")})


def italian_customer_with_a_long_product_and_an_invoice() -> str:
    """An Italian account: a subscription with a long name, cancelled at its period's end
    (the longest badge: "Disdetto, termina il ..."), and its invoice. Its number."""
    user = get_user_model().objects.create_user(EMAIL, email=EMAIL, password=PASSWORD)
    account = access.create_account(EMAIL, user_id=user.pk, language="it")
    start = today()
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=122000, currency="EUR", card=TEST_CARD, today=start,
        reminder_days_before=7, product_name=LONG_NAME, billing_address="Giulia Bianchi\nVia Verdi 3\n00184 Roma")
    line = tax_line(122000, applicable_rate(ITALY, Buyer("IT"), start), prices_include_tax=True)
    tax = access.InvoiceTax(line=line, prices_include_tax=True,
                            seller=access.InvoiceSeller(ITALY, "Rossi Abbonamenti S.r.l.", "Via Roma 1\n20121 Milano"),
                            buyer_country="IT", buyer_vat_number=None)
    receipt, _ = access.create_receipt(sub, billing_date=start, amount=122000, currency="EUR", charge_id="ch_layout",
                                       retention_days=200, period_end=start + timedelta(days=30), tax=tax)
    sub = access.get_subscription(account.account_id, sub.sub_id)
    sub.update(actions=[Subscription.PaidThroughDate.set((start + timedelta(days=30)).isoformat())])
    lifecycle.cancel_at_period_end(access.get_subscription(account.account_id, sub.sub_id), today=start,
                                   actor=EMAIL, reason="other")
    return receipt.Number


def inside_the_screen(page, selector: str) -> list[str]:
    """Each element of ``selector`` whose box leaves the screen, or is cut by its own box
    (its content wider than it shows): described, for the assertion's message."""
    return page.evaluate("""(selector) => [...document.querySelectorAll(selector)].flatMap(el => {
        const box = el.getBoundingClientRect();
        const out = box.left < 0 || box.right > window.innerWidth || el.scrollWidth > el.clientWidth + 1;
        return out ? [`${selector} ${Math.round(box.left)}..${Math.round(box.right)} scroll ${el.scrollWidth}/${el.clientWidth}`] : [];
    })""", selector)


def test_a_long_name_the_italian_badge_and_an_invoice_fit_a_phone(phone_page, moto_table, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    number = italian_customer_with_a_long_product_and_an_invoice()
    log_in(phone_page, EMAIL, PASSWORD)  # the account's language, Italian, from here on

    phone_page.goto("/")
    screenshot(phone_page, "layout-dashboard-it-390")
    assert phone_page.locator("html").get_attribute("lang") == "it"
    assert phone_page.get_by_test_id("sub-status").count() == 1
    assert no_horizontal_scroll(phone_page)
    problems = [*inside_the_screen(phone_page, "[data-testid=subscription]"),
                *inside_the_screen(phone_page, "[data-testid=subscription] h2"),
                *inside_the_screen(phone_page, "[data-testid=sub-status]")]
    assert problems == []

    phone_page.goto(f"/receipts/{number}/")
    screenshot(phone_page, "layout-invoice-it-390")
    assert no_horizontal_scroll(phone_page)
    problems = [*inside_the_screen(phone_page, "[data-testid=tax-document] .table-responsive"),
                *inside_the_screen(phone_page, "[data-testid=document-lines] th:last-child"),
                *inside_the_screen(phone_page, "[data-testid=document-totals] th:last-child"),
                *inside_the_screen(phone_page, "[data-testid=document-gross]")]
    assert problems == []
