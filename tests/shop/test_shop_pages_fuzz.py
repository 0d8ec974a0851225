"""Hypothesis: no URL id and no posted input makes a shop page answer 500 (customer or
staff); the shop answers the site's 503 when DynamoDB is down."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.models import configure
from devtools.localengine import free_port
from shop import access
from tests.builders import make_user
from tests.shop import test_shop_pages as pages

shop_site = pages.shop_site
shop_stock = pages.shop_stock

FUZZ = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80)
anything = st.one_of(
    text,
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from(["", "album", "book", "SAVE10", pages.GIFT_CODE, "4242 4242 4242 4242", "0", "101", "a#b",
                     "x" * 300, "2026-02-30", "12"]),
)
ids = st.one_of(text.filter(lambda s: s not in ("", ".", "..")), st.sampled_from(["album", "a#b", "x" * 70, "%00"]))

CUSTOMER_URLS = ["/shop/p/{}/", "/shop/c/{}/", "/shop/orders/{}/"]
STAFF_URLS = ["/admin/shop/products/{}/", "/admin/shop/products/{}/orders/", "/admin/shop/warehouses/{}/",
              "/admin/shop/warehouses/{}/shipments/", "/admin/shop/orders/{}/", "/admin/shop/customers/{}/invoices/"]


@pytest.fixture
def staff(shop_stock) -> Client:
    client = Client()
    client.force_login(make_user("fuzz-staff@example.com", staff=True, money=True))
    return client


@FUZZ
@given(ident=ids)
def test_ids_in_urls_never_500(shop_stock, customer, staff, ident) -> None:
    segment = quote(ident, safe="")  # an encoded '/' may reach another URL: 405 there (POST only)
    for url in CUSTOMER_URLS:
        assert customer.client.get(url.format(segment)).status_code in (200, 404, 405), url
    for url in STAFF_URLS:
        assert staff.get(url.format(segment)).status_code in (200, 404, 405), url
    assert staff.post(f"/admin/shop/shipments/{segment}/ship/", {"carrier": "c", "tracking_number": "t"}
                      ).status_code in (302, 404)
    assert staff.post(f"/admin/shop/orders/{segment}/cancel/").status_code in (302, 404)


@FUZZ
@given(street=anything, zip_code=anything, city=anything, country=anything, code=anything, gift=anything,
       number=anything, month=anything, year=anything, cvc=anything, token=anything, product=anything,
       quantity=anything)
def test_cart_and_checkout_forms_never_500(shop_stock, customer, street, zip_code, city, country, code, gift,
                                           number, month, year, cvc, token, product, quantity) -> None:
    client = customer.client
    assert client.post("/shop/p/album/", {"quantity": quantity}).status_code in (200, 302)
    assert client.post("/shop/cart/update/", {"product": product, "quantity": quantity}).status_code == 302
    pages.add(client, "book")
    response = client.post("/shop/checkout/", {
        "token": token, "street": street, "zip_code": zip_code, "city": city, "country": country,
        "discount_code": code, "gift_card": gift, "card_number": number, "exp_month": month, "exp_year": year,
        "cvc": cvc, "save_address": street})
    assert response.status_code in (200, 302)
    assert client.get("/shop/history/", {"first": code, "last": gift}).status_code == 200
    assert client.post("/shop/gift-card/", {"code": gift}).status_code == 200


@FUZZ
@given(a=anything, b=anything, c=anything, d=anything)
def test_staff_forms_never_500(staff, a, b, c, d) -> None:
    posts = {
        "/admin/shop/products/add/": {"product_id": a, "name": b, "category": c, "price": d, "currency": b},
        "/admin/shop/warehouses/add/": {"warehouse_id": a, "name": b, "street": c, "zip_code": d, "city": b,
                                        "country": c},
        "/admin/shop/products/album/": {"warehouse_id": a, "change": b, "reason": c},
        "/admin/shop/warehouses/gbg/": {"product_id": a, "change": d, "reason": c},
        "/admin/shop/codes/": {"code": a, "percent_off": b, "amount_off": c, "currency": d, "max_uses": b,
                               "valid_from": c, "valid_until": d},
        "/admin/shop/gift-cards/": {"code": a, "balance": b, "currency": c},
        "/admin/shop/codes/SAVE10/": {"max_uses": a, "valid_from": b, "valid_until": c},
        "/admin/shop/gift-cards/?lookup=1": {"code": a},
    }
    for url, data in posts.items():
        assert staff.post(url, data).status_code in (200, 302), url
    assert staff.get("/admin/shop/", {"kind": a, "ident": b}).status_code in (200, 302)
    assert staff.get("/admin/shop/codes/", {"code": a}).status_code == 200
    assert staff.get("/admin/shop/products/album/orders/", {"first": a, "last": b}).status_code == 200
    # whatever was posted, stock never went below what is reserved
    for s in access.get_product_inventory_by_product_id("album"):
        assert s.Available == s.OnHand - s.Reserved >= 0


def engine_down(client, settings) -> None:
    """The shop's table on an endpoint where nothing listens; errors become pages."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    settings.DYNAMODB_ENDPOINT = endpoint
    configure(table_name="down_table", region="us-east-1", host=endpoint, max_retry_attempts=0,
              connect_timeout_seconds=1)
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    client.raise_request_exception = False


@pytest.mark.django_db
def test_dynamodb_down_gives_the_sites_503(client, settings) -> None:
    client.force_login(get_user_model().objects.create_user("down@example.com", password="x"))
    session = client.session
    session["account_id"] = "acct-down"  # the shop's own reads are what fails
    session.save()
    engine_down(client, settings)
    for url in ("/shop/", "/shop/p/album/", "/shop/orders/", "/shop/orders/abc/", "/shop/history/"):
        response = client.get(url)
        assert response.status_code == 503, url
        assert "Traceback" not in response.content.decode()


@pytest.mark.django_db
def test_dynamodb_down_gives_a_visitor_the_sites_503(client, settings) -> None:
    # The storefront is open to visitors: an outage is the same 503 page for them.
    session = client.session
    session["shop_cart"] = {"album": {"quantity": 1, "price": 10000, "currency": "SEK"}}
    session.save()
    engine_down(client, settings)
    for url in ("/shop/", "/shop/c/books/", "/shop/p/album/", "/shop/cart/"):
        response = client.get(url)
        assert response.status_code == 503, url
        assert "Traceback" not in response.content.decode()
