"""The shop in a real Chromium: browse, cart, checkout with a discount code, a gift card
and a card, the order page; staff create the shipment from the pick list and mark it
shipped; the customer sees the tracking number. Desktop and 390 px, no CSP violation.

Screenshots go to artifacts/screenshots/shop-*.png.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from billing import access as billing_access
from tests.browser import log_in, no_horizontal_scroll, screenshot
from tests.builders import make_user
from tests.shop import test_shop_pages as pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

shop_site = pages.shop_site
shop_stock = pages.shop_stock

EMAIL = "ivy@example.com"
PASSWORD = "ivy-Long-password-2026"
STAFF = "stella@example.com"



def watch_csp(page) -> list[str]:
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    return violations



def fill_address_code_and_gift_card(page) -> None:
    """The checkout's shipping address, a discount code and the gift card (the card: the caller)."""
    page.get_by_label("Street").fill("Slanbarsvagen")
    page.get_by_label("House number").fill("34")
    page.get_by_label("Postcode").fill("41787")
    page.get_by_label("City").fill("Goteborg")
    page.get_by_role("textbox", name="Country").fill("Sweden")
    page.get_by_label("Discount code (optional)").fill("save10")
    page.get_by_label("Gift card code (optional)").fill(pages.GIFT_CODE)


def test_shop_journey(browser, page, phone_page, live_server, shop_stock, settings) -> None:
    user = get_user_model().objects.create_user(EMAIL, email=EMAIL, password=PASSWORD)
    billing_access.create_account(EMAIL, user_id=user.pk)
    staff_user = make_user(STAFF, staff=True, money=True)
    staff_user.set_password(PASSWORD)
    staff_user.save()
    csp = watch_csp(page)

    # browse
    log_in(page, EMAIL, PASSWORD)
    page.goto("/shop/")
    assert page.get_by_test_id("product-card").count() == 2
    expect(page.locator("body")).to_contain_text("3 left")
    expect(page.locator("body")).to_contain_text("Out of stock")
    screenshot(page, "shop-catalogue")
    page.get_by_role("link", name="Options Open").click()
    assert page.get_by_test_id("availability").inner_text() == "3 left"
    page.get_by_label("Quantity").fill("2")
    screenshot(page, "shop-product")
    page.get_by_role("button", name="Add to cart").click()

    # cart: change the quantity, add another product, remove it again
    page.wait_for_url("**/shop/cart/")
    assert page.get_by_test_id("cart-total").inner_text().startswith("SEK") or "200" in page.content()
    page.goto("/shop/p/book/")
    page.get_by_role("button", name="Add to cart").click()
    expect(page.get_by_test_id("cart-line")).to_have_count(2)
    page.get_by_test_id("cart-line").filter(has_text="The Book").get_by_role("button", name="Remove").click()
    expect(page.get_by_test_id("cart-line")).to_have_count(1)
    screenshot(page, "shop-cart")

    # checkout with a discount code, a gift card and a card
    page.get_by_role("link", name="Check out").click()
    page.wait_for_url("**/shop/checkout/")
    fill_address_code_and_gift_card(page)
    page.get_by_label("Card number").fill("4242 4242 4242 4242")
    page.get_by_label("Expiry month").select_option("12")
    page.get_by_label("Expiry year").select_option("2030")
    page.get_by_label("Security code (CVC)").fill("123")
    screenshot(page, "shop-checkout")
    page.get_by_role("button", name="Place order").click()
    page.wait_for_url(re.compile(r".*/shop/orders/[0-9a-f]+/$"))
    order_id = page.url.rstrip("/").rsplit("/", 1)[1]
    expect(page.locator(".alert-success")).to_contain_text("is placed and paid")
    payments = " ".join(page.get_by_test_id("payment").all_inner_texts())
    assert "Gift card ending ABCD" in payments and "ending 4242" in payments
    expect(page.locator("body")).to_contain_text("Not shipped yet")
    screenshot(page, "shop-order")

    # staff: create the shipments, find them on the pick list, mark one shipped
    staff_context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    staff_page = staff_context.new_page()
    staff_page.goto("/admin/")
    staff_page.fill("#id_username", STAFF)
    staff_page.fill("#id_password", PASSWORD)
    staff_page.click("input[type=submit]")
    staff_page.goto(f"/admin/shop/orders/{order_id}/")
    staff_page.click("input[value='Create shipments from the open lines']")
    expect(staff_page.locator(".messagelist")).to_contain_text(re.compile(r"\d+ shipments? to pick"))
    staff_page.goto("/admin/shop/warehouses/gbg/shipments/")
    assert staff_page.get_by_test_id("pick-row").count() == 1
    screenshot(staff_page, "shop-staff-pick-list")
    staff_page.get_by_test_id("pick-row").get_by_role("link", name=order_id).click()
    form = staff_page.get_by_test_id("shipment").filter(has_text="gbg").get_by_test_id("ship-form")
    form.get_by_label("Carrier").fill("PostNord")
    form.get_by_label("Tracking number").fill("PN123456789SE")
    form.get_by_role("button", name="Mark shipped").click()
    expect(staff_page.locator(".messagelist")).to_contain_text("shipped with PostNord")
    screenshot(staff_page, "shop-staff-order")
    staff_context.close()

    # the customer sees the tracking number
    page.reload()
    assert "PN123456789SE" in page.get_by_test_id("tracking").all_inner_texts()
    screenshot(page, "shop-order-shipped")
    assert csp == []

    # 390 px: the same pages fit the screen
    phone_csp = watch_csp(phone_page)
    log_in(phone_page, EMAIL, PASSWORD)
    for url, name in (("/shop/", "catalogue"), ("/shop/p/album/", "product"), ("/shop/orders/", "orders"),
                      (f"/shop/orders/{order_id}/", "order"), ("/shop/history/", "history")):
        phone_page.goto(url)
        assert no_horizontal_scroll(phone_page), url
        screenshot(phone_page, f"shop-phone-{name}")
    phone_page.goto("/shop/p/book/")
    phone_page.get_by_role("button", name="Add to cart").click()
    phone_page.wait_for_url("**/shop/cart/")
    assert no_horizontal_scroll(phone_page)
    screenshot(phone_page, "shop-phone-cart")
    phone_page.get_by_role("link", name="Check out").click()
    phone_page.wait_for_url("**/shop/checkout/")
    assert no_horizontal_scroll(phone_page)
    assert phone_page.get_by_label("Street").input_value() == "Slanbarsvagen"  # kept from the last order
    screenshot(phone_page, "shop-phone-checkout")
    assert phone_csp == []


def test_a_visitor_shops_and_logs_in_at_checkout_on_a_phone(phone_page, shop_stock) -> None:
    # 390 px, no account in the session: browse, add to the cart, check out; the log-in
    # comes then and goes back to the checkout with the same cart.
    user = get_user_model().objects.create_user(EMAIL, email=EMAIL, password=PASSWORD)
    billing_access.create_account(EMAIL, user_id=user.pk)
    page = phone_page
    csp = watch_csp(page)
    page.goto("/shop/")
    assert page.get_by_test_id("product-card").count() == 2
    assert no_horizontal_scroll(page)
    screenshot(page, "shop-visitor-catalogue")
    page.get_by_role("link", name="Options Open").click()
    page.get_by_label("Quantity").fill("2")
    page.get_by_role("button", name="Add to cart").click()
    page.wait_for_url("**/shop/cart/")
    expect(page.get_by_test_id("cart-line")).to_have_count(1)
    expect(page.get_by_test_id("log-in-at-checkout")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "shop-visitor-cart")
    page.get_by_role("link", name="Check out").click()
    page.wait_for_url("**/login/?next=/shop/checkout/")
    assert no_horizontal_scroll(page)
    screenshot(page, "shop-visitor-log-in")
    page.locator("#id_username").fill(EMAIL)
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/shop/checkout/")
    expect(page.locator("main")).to_contain_text("Options Open")
    expect(page.get_by_label("Street")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "shop-visitor-checkout")
    page.goto("/shop/cart/")
    expect(page.get_by_test_id("cart-line")).to_have_count(1)
    expect(page.get_by_test_id("cart-line").get_by_role("spinbutton")).to_have_value("2")
    expect(page.get_by_test_id("log-in-at-checkout")).to_have_count(0)
    assert csp == []


@pytest.fixture
def shop_on_local_engine(local_table, settings):
    """The shop's table on DynamoDB Local: two requests at once need real transactions
    (moto's are not atomic between threads)."""
    from core.dynamo.table import delete_table, ensure_table
    from shop.models import ShopItem, configure

    before = ShopItem.Meta.table_name
    name = f"shop_browser_{id(settings)}"
    settings.SHOP_DYNAMODB_TABLE = name
    settings.SHOP_CATEGORIES = ["music", "books"]
    configure(table_name=name)
    ensure_table(model=ShopItem)
    pages.build_stock()
    yield name
    delete_table(model=ShopItem)
    configure(table_name=before)


def test_a_double_click_places_one_order(page, shop_on_local_engine, settings) -> None:
    from core.payments.gateway import get_gateway
    from shop import access

    user = get_user_model().objects.create_user(EMAIL, email=EMAIL, password=PASSWORD)
    account = billing_access.create_account(EMAIL, user_id=user.pk)
    log_in(page, EMAIL, PASSWORD)
    page.goto("/shop/p/book/")
    page.get_by_role("button", name="Add to cart").click()
    page.goto("/shop/checkout/")
    page.get_by_label("Street").fill("Hamngatan")
    page.get_by_label("Postcode").fill("41111")
    page.get_by_label("City").fill("Goteborg")
    page.get_by_role("textbox", name="Country").fill("Sweden")
    page.get_by_label("Card number").fill("4242 4242 4242 4242")
    page.get_by_label("Expiry year").select_option("2030")
    page.get_by_label("Security code (CVC)").fill("123")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/shop/checkout/" in r.url else None)
    # A slow card company keeps the first submit busy, so the second click finds the form
    # still on screen and the browser really sends it twice (as a customer's double click does).
    settings.PAYMENT_GATEWAY_LATENCY_MS = 1500
    button = page.get_by_role("button", name="Place order")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    with page.expect_request(lambda r: r.method == "POST" and "/shop/checkout/" in r.url):
        page.mouse.click(x, y)
    page.mouse.click(x, y)  # the second click of an impatient customer, while the first is under way
    # (the browser aborts the first navigation: poll the address rather than wait for one load)
    expect(page).to_have_url(re.compile(r".*/shop/orders/[0-9a-f]+/$"))
    screenshot(page, "shop-double-click")
    assert len(posts) == 2  # the browser did send the form twice
    assert len(access.get_orders_by_customer_id(account.account_id)) == 1
    assert len([c for c in get_gateway().charges_made(source="shop") if c["status"] == "succeeded"]) == 1
    assert sum(s.Available for s in access.get_product_inventory_by_product_id("book")) == 49
