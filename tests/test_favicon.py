"""The site's icon: every page names static/favicon.svg and /favicon.ico leads
to it, so no browser logs a 404 for it on any page (the portal, the shop, the admin, the
error pages)."""

from __future__ import annotations

import re

import pytest
from django.test import Client, RequestFactory

from tests.builders import make_user
from tests.shop import test_shop_pages as pages

shop_site = pages.shop_site  # the shop's table, for the shop's pages in Chromium
shop_stock = pages.shop_stock
ICON = re.compile(r'<link rel="icon" href="(/static/favicon\.svg)" type="image/svg\+xml">')


def test_every_kind_of_page_names_the_icon(db, moto_table) -> None:
    from billing.views import server_error

    client = Client()
    for path in ("/", "/login/", "/signup/", "/no-such-page/", "/admin/login/"):
        assert ICON.search(client.get(path).content.decode()), path
    assert ICON.search(server_error(RequestFactory().get("/")).content.decode())  # its own template
    client.force_login(make_user("icon-staff@example.com", staff=True))
    for path in ("/admin/", "/admin/password_change/", "/admin/staff/"):  # Django's pages and the staff pages
        assert ICON.search(client.get(path).content.decode()), path


def test_favicon_ico_leads_to_the_icon(db) -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == "/static/favicon.svg"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_chromium_finds_the_icon_and_logs_no_404(page, shop_stock, live_server) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 and r.request.resource_type != "document"
            else None)
    for path in ("/", "/login/", "/signup/", "/shop/", "/shop/p/album/", "/shop/cart/", "/admin/login/"):
        page.goto(path)
        href = page.locator('link[rel="icon"]').get_attribute("href")
        icon = page.request.get(href)
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg"), path
    assert page.request.get("/favicon.ico").status == 200  # followed to the icon
    assert errors == [] and missing == []
