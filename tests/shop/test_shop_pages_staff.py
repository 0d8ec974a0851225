"""The shop's staff pages inside the admin: catalogue, stock (audited), pick list,
shipments and tracking (the customer sees it, and gets an e-mail), cancel and refund,
reports in a date range, codes and gift cards; request counts; staff only."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from billing import access as billing_access
from shop import access
from shop.models import OrderStatus
from tests.builders import make_user
from tests.shop import test_shop_pages as pages
from tests.shop.test_shop_pages import GIFT_CODE, add, order_id_of, place

# The shop fixtures of tests/shop/test_shop_pages.py, used here by name.
shop_site = pages.shop_site
shop_stock = pages.shop_stock


@pytest.fixture
def staff(shop_stock) -> Client:
    client = Client()
    client.force_login(make_user("sam@example.com", staff=True, money=True))
    return client


@pytest.fixture
def paid_order(shop_stock, customer) -> tuple:
    add(customer.client, "album", 3)  # 2 from gbg, 1 from boras
    return customer, order_id_of(place(customer.client, gift_card=GIFT_CODE))


def test_staff_pages_need_staff(shop_stock, customer, client) -> None:
    for url in ("/admin/shop/", "/admin/shop/products/", "/admin/shop/warehouses/gbg/"):
        assert client.get(url).status_code == 302
        assert customer.client.get(url).status_code == 302  # a customer is not staff


def test_add_product_and_warehouse(staff) -> None:
    response = staff.post("/admin/shop/products/add/", {"product_id": "lp", "name": "An LP", "category": "music",
                                                         "price": 25000, "currency": "SEK"})
    assert response.status_code == 302
    assert access.get_product_by_product_id("lp").Price == 25000
    again = staff.post("/admin/shop/products/add/", {"product_id": "lp", "name": "An LP", "category": "music",
                                                      "price": 1, "currency": "SEK"})
    assert "exists already" in again.content.decode()
    assert "An LP" in staff.get("/admin/shop/products/?category=music").content.decode()
    response = staff.post("/admin/shop/warehouses/add/", {"warehouse_id": "sthlm", "name": "Stockholm",
                                                          "street": "Vasagatan", "zip_code": "11120",
                                                          "city": "Stockholm", "country": "Sweden"})
    assert response.status_code == 302 and access.get_warehouse_by_warehouse_id("sthlm").Name == "Stockholm"


def test_inventory_pages_and_audited_adjustment(staff, ddb_requests) -> None:
    ddb_requests.reset()
    html = staff.get("/admin/shop/products/album/").content.decode()
    assert ddb_requests.by_name() == {"GetItem": 1, "Query": 1}  # patterns 2 and 4
    assert "gbg" in html and "boras" in html
    ddb_requests.reset()
    html = staff.get("/admin/shop/warehouses/gbg/").content.decode()
    assert ddb_requests.by_name() == {"GetItem": 1, "Query": 1}  # patterns 3 and 14
    assert "album" in html and "book" in html
    response = staff.post("/admin/shop/products/album/", {"warehouse_id": "gbg", "change": 5,
                                                          "reason": "delivery 42"})
    assert response.status_code == 302
    assert {s.warehouse_id: s.Available for s in access.get_product_inventory_by_product_id("album")}["gbg"] == 7
    # stocking somewhere new, and refusing to write off more than is there
    staff.post("/admin/shop/warehouses/boras/", {"product_id": "book", "change": 4, "reason": "new shelf"})
    assert {s.warehouse_id: s.Available for s in access.get_product_inventory_by_product_id("book")}["boras"] == 4
    html = staff.post("/admin/shop/products/album/", {"warehouse_id": "boras", "change": -9,
                                                      "reason": "broken"}).content.decode()
    assert "Not that much unreserved stock" in html
    events = billing_access.get_events_by_account("SHOP")
    assert {(e.Subject, e.Note, e.Actor) for e in events if e.Action == "shop.adjust_stock"} == {
        ("book/boras", "new shelf", "sam@example.com"), ("album/gbg", "delivery 42", "sam@example.com")}
    assert "delivery 42" in staff.get("/admin/shop/").content.decode()


def test_pick_list_ship_and_the_customer_sees_the_tracking(staff, paid_order, ddb_requests) -> None:
    customer, order_id = paid_order
    assert staff.post(f"/admin/shop/orders/{order_id}/shipments/").status_code == 302
    ddb_requests.reset()
    html = staff.get("/admin/shop/warehouses/gbg/shipments/").content.decode()
    assert ddb_requests.by_name() == {"GetItem": 1, "Query": 1}  # pattern 3, pattern 13
    assert order_id in html
    details = access.get_order_details_by_order_id(order_id)
    shipment = next(s for s in details.shipments if s.WarehouseId == "gbg")
    mail.outbox.clear()
    response = staff.post(f"/admin/shop/shipments/{shipment.shipment_id}/ship/",
                          {"carrier": "PostNord", "tracking_number": "PN123456789SE"})
    assert response.status_code == 302
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.PARTIALLY_SHIPPED
    html = customer.client.get(f"/shop/orders/{order_id}/").content.decode()
    assert "PostNord" in html and "PN123456789SE" in html
    gbg = access.get_warehouse_by_warehouse_id("gbg")
    assert f"From warehouse {gbg.Name}" in html and "From warehouse gbg" not in html  # its name, not its id
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [customer.email]
    assert "PN123456789SE" in mail.outbox[0].body and "PostNord" in mail.outbox[0].alternatives[0][0]
    # shipping twice is refused with a message, not a 500
    again = staff.post(f"/admin/shop/shipments/{shipment.shipment_id}/ship/",
                       {"carrier": "DHL", "tracking_number": "X1"}, follow=True)
    assert "is shipped" in again.content.decode()


def test_cancel_puts_back_stock_and_gift_card_and_mails(staff, paid_order) -> None:
    customer, order_id = paid_order
    mail.outbox.clear()
    response = staff.post(f"/admin/shop/orders/{order_id}/cancel/")
    assert response.status_code == 302
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.CANCELLED
    assert access.get_gift_card(GIFT_CODE).Balance == 5000
    assert sum(s.Available for s in access.get_product_inventory_by_product_id("album")) == 3
    assert len(mail.outbox) == 1 and "cancelled" in mail.outbox[0].subject


def test_a_cancel_by_english_staff_mails_an_italian_customer_in_italian(staff, paid_order) -> None:
    # The amounts are formatted when the e-mail is rendered, in the customer's language,
    # not in the staff page's: "300,00 SEK", never "300.00 SEK".
    customer, order_id = paid_order
    billing_access.set_account_language(customer.account_id, "it")
    mail.outbox.clear()
    staff.post(f"/admin/shop/orders/{order_id}/cancel/", HTTP_ACCEPT_LANGUAGE="en")
    [message] = mail.outbox
    assert "SEK" in message.body and not re.search(r"\d\.\d\d SEK", message.body), message.body
    assert re.search(r"\d,\d\d\xa0?SEK|\d,\d\d SEK", message.body)


def test_refund_after_shipping(staff, paid_order) -> None:
    customer, order_id = paid_order
    staff.post(f"/admin/shop/orders/{order_id}/shipments/")
    for shipment in access.get_order_details_by_order_id(order_id).shipments:
        staff.post(f"/admin/shop/shipments/{shipment.shipment_id}/ship/", {"carrier": "DHL", "tracking_number": "D1"})
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.SHIPPED
    mail.outbox.clear()
    staff.post(f"/admin/shop/orders/{order_id}/refund/")
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.REFUNDED
    assert len(mail.outbox) == 1 and "refunded" in mail.outbox[0].subject


def test_cancel_needs_the_money_permission(shop_stock, paid_order) -> None:
    _, order_id = paid_order
    client = Client()
    client.force_login(make_user("pat-staff@example.com", staff=True))
    assert client.post(f"/admin/shop/orders/{order_id}/cancel/").status_code == 403
    assert access.get_order_details_by_order_id(order_id).order.Status == OrderStatus.PAID


def test_reports_in_a_date_range(staff, paid_order, ddb_requests) -> None:
    customer, order_id = paid_order
    ddb_requests.reset()
    html = staff.get("/admin/shop/products/album/orders/").content.decode()
    assert ddb_requests.by_name() == {"GetItem": 1, "Query": 1}  # pattern 9
    assert order_id in html and "3 × Options Open" in html
    ddb_requests.reset()
    html = staff.get(f"/admin/shop/customers/{customer.account_id}/invoices/").content.decode()
    assert ddb_requests.by_name() == {"Query": 1}  # pattern 15
    assert order_id in html
    html = staff.get(f"/admin/shop/customers/{customer.account_id}/invoices/?first=2001-01-01&last=2001-01-31")
    assert order_id not in html.content.decode()


def test_find_by_id(staff, paid_order) -> None:
    _, order_id = paid_order
    response = staff.get("/admin/shop/", {"kind": "order", "ident": order_id})
    assert response.status_code == 302 and response["Location"] == f"/admin/shop/orders/{order_id}/"
    assert staff.get("/admin/shop/", {"kind": "order", "ident": "a#b"}).status_code == 200


def test_discount_codes_and_gift_cards(staff) -> None:
    response = staff.post("/admin/shop/codes/", {"code": "spring", "percent_off": 15, "max_uses": 100})
    assert response.status_code == 302
    code = access.get_discount_code("SPRING")
    assert (code.PercentOff, code.MaxUses) == (15, 100)
    assert "15 % off" in staff.get("/admin/shop/codes/?code=spring").content.decode()
    html = staff.post("/admin/shop/codes/", {"code": "both", "percent_off": 5, "amount_off": 100,
                                             "currency": "SEK"}).content.decode()
    assert "either a percentage or an amount" in html
    assert staff.post("/admin/shop/gift-cards/", {"code": "NEW-CARD-9876", "balance": 20000,
                                                  "currency": "SEK"}).status_code == 302
    html = staff.post("/admin/shop/gift-cards/?lookup=1", {"code": "new-card-9876"}).content.decode()
    assert "ending 9876" in html and "200.00" in html


def test_unknown_ids_are_404(staff) -> None:
    for url in ("/admin/shop/products/nope/", "/admin/shop/warehouses/nope/", "/admin/shop/orders/nope/",
                "/admin/shop/warehouses/nope/shipments/", "/admin/shop/products/a%23b/orders/",
                "/admin/shop/customers/a%23b/invoices/"):
        assert staff.get(url).status_code == 404, url
    assert staff.post("/admin/shop/shipments/nope/ship/", {"carrier": "x", "tracking_number": "y"}).status_code == 404
    assert staff.post("/admin/shop/orders/nope/launch/").status_code == 404


def test_the_product_form_offers_the_shops_categories_only(staff) -> None:
    html = staff.get("/admin/shop/products/add/").content.decode()
    assert '<option value="music">Music</option>' in html and '<option value="books">Books</option>' in html
    # a category the catalogue does not list would hide the product: refused
    response = staff.post("/admin/shop/products/add/", {"product_id": "odd", "name": "Odd", "category": "toys",
                                                         "price": 100, "currency": "SEK"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert access.get_product_by_product_id("odd") is None
    staff.post("/admin/shop/products/add/", {"product_id": "cd", "name": "A CD", "category": "books",
                                             "price": 100, "currency": "SEK"})
    assert "A CD" in staff.get("/admin/shop/products/?category=books").content.decode()


def test_a_code_with_validity_dates_from_the_staff_form_to_the_checkout(staff, customer, ddb_requests) -> None:
    from datetime import UTC, datetime

    import time_machine

    html = staff.post("/admin/shop/codes/", {"code": "easter", "percent_off": 25, "valid_from": "2026-04-03",
                                             "valid_until": "2026-04-02"}).content.decode()
    assert "The last valid day is before the first" in html and access.get_discount_code("EASTER") is None
    assert staff.post("/admin/shop/codes/", {"code": "easter", "percent_off": 25, "valid_from": "2026-04-03",
                                             "valid_until": "2026-04-06"}).status_code == 302
    code = access.get_discount_code("EASTER")
    assert (code.ValidFrom, code.ValidUntil) == ("2026-04-03", "2026-04-06")
    event = next(e for e in billing_access.get_events_by_account("SHOP") if e.Action == "shop.create_discount_code")
    assert "2026-04-06" in str(event.After)
    states = {}
    for day, expected in ((2, "not valid yet"), (4, "active"), (7, "expired")):
        with time_machine.travel(datetime(2026, 4, day, 12, tzinfo=UTC), tick=False):
            ddb_requests.reset()
            html = staff.get("/admin/shop/codes/?code=easter").content.decode()
            assert ddb_requests.by_name() == {"GetItem": 1}
            states[day] = html.split('data-testid="code-state">')[1].split("<")[0]
            assert "valid from 2026-04-03 until 2026-04-06 (included)" in html
        assert states[day] == expected
    # the customer's checkout says why the code is refused, and takes it once valid
    add(customer.client, "book")
    with time_machine.travel(datetime(2026, 4, 2, 23, 59, tzinfo=UTC), tick=False):
        html = place(customer.client, discount_code="easter").content.decode()
    assert "This code is not valid until 2026-04-03" in html
    with time_machine.travel(datetime(2026, 4, 7, 0, 0, 1, tzinfo=UTC), tick=False):
        html = place(customer.client, discount_code="easter").content.decode()
    assert "This code expired on 2026-04-06" in html
    assert access.get_orders_by_customer_id(customer.account_id) == []
    with time_machine.travel(datetime(2026, 4, 6, 23, 59, tzinfo=UTC), tick=False):
        order_id = order_id_of(place(customer.client, discount_code="easter"))
    assert access.get_order_details_by_order_id(order_id).order.Discount == 1000


def _refunds() -> list[tuple]:
    from core.payments.gateway import get_gateway

    db = get_gateway()._db()
    return db.execute("SELECT idempotency_key, amount, status FROM refunds").fetchall()


def test_cancel_end_to_end_refunds_the_card_and_writes_the_ledger(staff, shop_stock, customer, ddb_requests) -> None:
    add(customer.client, "album", 2)  # 200.00: 50.00 by gift card, 150.00 by card
    order_id = order_id_of(place(customer.client, gift_card=GIFT_CODE))
    ddb_requests.reset()
    html = staff.get(f"/admin/shop/orders/{order_id}/").content.decode()
    assert ddb_requests.by_name() == {"Query": 1}  # pattern 5
    assert "Cancel order" in html and "Refund returned order" not in html
    ddb_requests.reset()
    assert staff.post(f"/admin/shop/orders/{order_id}/cancel/").status_code == 302
    # the order read by the page (its 404), again (consistent) by cancel, which the card refund
    # reuses; the closing transaction and the one recording the refund; the audit event; the
    # e-mail's address
    assert ddb_requests.by_name() == {"Query": 2, "TransactWriteItems": 2, "PutItem": 1, "GetItem": 1}
    details = access.get_order_details_by_order_id(order_id)
    assert details.order.Status == OrderStatus.CANCELLED
    assert {p.Type: (p.Status, p.RefundedAmount) for p in details.payments} == {
        "GiftCard": ("refunded", 5000), "Card": ("refunded", 15000)}
    assert (f"{order_id}:cancel:card", 15000, "succeeded") in _refunds()
    assert {s.warehouse_id: (s.OnHand, s.Reserved, s.Available)
            for s in access.get_product_inventory_by_product_id("album")} == {"gbg": (2, 0, 2), "boras": (1, 0, 1)}
    ledger = access.get_gift_card_with_ledger(GIFT_CODE)
    assert (ledger.entries[0].Kind, ledger.entries[0].Amount, ledger.entries[0].Actor) == (
        "cancel", 5000, "sam@example.com")
    assert ledger.card.Balance == 5000
    # a second click is refused with a message, nothing happens twice
    again = staff.post(f"/admin/shop/orders/{order_id}/cancel/", follow=True).content.decode()
    assert "only a paid order not yet shipped" in again
    assert len(_refunds()) == 1 and access.get_gift_card(GIFT_CODE).Balance == 5000


def test_refund_end_to_end_restocks_returned_goods(staff, paid_order, ddb_requests) -> None:
    customer, order_id = paid_order  # 3 albums (2 gbg, 1 boras): 50.00 gift card, 250.00 card
    staff.post(f"/admin/shop/orders/{order_id}/shipments/")
    gbg = next(s for s in access.get_order_details_by_order_id(order_id).shipments if s.WarehouseId == "gbg")
    staff.post(f"/admin/shop/shipments/{gbg.shipment_id}/ship/", {"carrier": "DHL", "tracking_number": "D1"})
    html = staff.get(f"/admin/shop/orders/{order_id}/").content.decode()
    assert "Refund returned order" in html and "Cancel order" not in html  # partly shipped
    assert staff.post(f"/admin/shop/orders/{order_id}/cancel/", follow=True).status_code == 200
    ddb_requests.reset()
    assert staff.post(f"/admin/shop/orders/{order_id}/refund/").status_code == 302
    assert ddb_requests.by_name() == {"Query": 2, "TransactWriteItems": 2, "PutItem": 1, "GetItem": 1}
    details = access.get_order_details_by_order_id(order_id)
    assert details.order.Status == OrderStatus.REFUNDED
    assert {s.Status for s in details.shipments} == {"shipped", "cancelled"}  # boras never left
    # gbg's two came back on hand; boras' reservation was released
    assert {s.warehouse_id: (s.OnHand, s.Reserved, s.Available)
            for s in access.get_product_inventory_by_product_id("album")} == {"gbg": (2, 0, 2), "boras": (1, 0, 1)}
    assert (f"{order_id}:refund:card", 25000, "succeeded") in _refunds()
    assert access.get_gift_card(GIFT_CODE).Balance == 5000
    assert access.get_gift_card_with_ledger(GIFT_CODE).entries[0].Kind == "refund"
    html = customer.client.get(f"/shop/orders/{order_id}/").content.decode()
    assert "refunded" in html.lower()


def test_staff_gift_card_page_shows_the_ledger_with_who(staff) -> None:
    staff.post("/admin/shop/gift-cards/", {"code": "STAFF-CARD-4321", "balance": 1500, "currency": "SEK"})
    html = staff.post("/admin/shop/gift-cards/?lookup=1", {"code": "staff-card-4321"}).content.decode()
    row = html.split('data-testid="ledger-row">')[1].split("</tr>")[0]
    assert "Issued" in row and "sam@example.com" in row and "15.00 SEK" in row


# --- changing and ending a discount code -------------------------------------------


def test_staff_change_a_codes_limit_and_dates_and_end_it(staff, customer, ddb_requests) -> None:
    from datetime import date, timedelta

    from shop.clock import today

    day = date.fromisoformat(today())
    first, last, yesterday = str(day - timedelta(days=30)), str(day + timedelta(days=30)), str(day - timedelta(days=1))
    staff.post("/admin/shop/codes/", {"code": "summer", "percent_off": 10, "max_uses": 5})
    assert 'href="/admin/shop/codes/SUMMER/"' in staff.get("/admin/shop/codes/?code=summer").content.decode()
    page = staff.get("/admin/shop/codes/SUMMER/").content.decode()
    assert 'name="max_uses" value="5"' in page and "End this code now" in page
    # the limit and the dates; the audit event keeps the terms before and after
    ddb_requests.reset()
    response = staff.post("/admin/shop/codes/SUMMER/", {"max_uses": "2", "valid_from": first, "valid_until": last})
    assert response.status_code == 302 and response["Location"] == "/admin/shop/codes/?code=SUMMER"
    assert ddb_requests.by_name() == {"GetItem": 1, "UpdateItem": 1, "PutItem": 1}  # read, change, audit
    code = access.get_discount_code("SUMMER")
    assert (code.PercentOff, code.MaxUses, code.ValidFrom, code.ValidUntil) == (10, 2, first, last)
    event = next(e for e in billing_access.get_events_by_account("SHOP") if e.Action == "shop.change_discount_code")
    assert (event.Subject, event.Actor) == ("SUMMER", "sam@example.com")
    assert event.After == {"max_uses": 2, "valid_from": first, "valid_until": last}
    assert "max_uses=5" in event.Note
    # the checkout follows the new terms
    add(customer.client, "book")
    order_id_of(place(customer.client, discount_code="summer"))
    staff.post("/admin/shop/codes/SUMMER/", {"max_uses": "2", "valid_from": first, "valid_until": yesterday})
    add(customer.client, "book")
    assert f"This code expired on {yesterday}" in place(customer.client, discount_code="summer").content.decode()
    # a limit below the uses made is refused; dates in the wrong order too; blank: no limit, open dates
    html = staff.post("/admin/shop/codes/SUMMER/", {"max_uses": "1"}).content.decode()
    assert "cannot be lower" not in html  # 1 use made, a limit of 1 is allowed (used up)
    assert access.get_discount_code("SUMMER").MaxUses == 1
    access.update_discount_code("SUMMER", max_uses=3, valid_from=None, valid_until=None)
    add(customer.client, "book")
    order_id_of(place(customer.client, discount_code="summer"))  # now a second use
    html = staff.post("/admin/shop/codes/SUMMER/", {"max_uses": "1"}).content.decode()
    assert "has been used 2 times: the limit cannot be lower" in html
    html = staff.post("/admin/shop/codes/SUMMER/", {"valid_from": "2026-06-02", "valid_until": "2026-06-01"}
                      ).content.decode()
    assert "The last valid day is before the first" in html
    assert staff.post("/admin/shop/codes/SUMMER/", {}).status_code == 302
    code = access.get_discount_code("SUMMER")
    assert (code.MaxUses, code.ValidFrom, code.ValidUntil, code.Uses) == (None, None, None, 2)
    # ending it: audited, checkout refuses it, the page says it ended and offers no edit
    ddb_requests.reset()
    assert staff.post("/admin/shop/codes/SUMMER/end/").status_code == 302
    assert ddb_requests.by_name() == {"GetItem": 1, "UpdateItem": 1, "PutItem": 1}
    assert access.get_discount_code("SUMMER").Active == "no"
    assert any(e.Action == "shop.end_discount_code" and e.Subject == "SUMMER"
               for e in billing_access.get_events_by_account("SHOP"))
    html = staff.get("/admin/shop/codes/?code=summer").content.decode()
    assert html.split('data-testid="code-state">')[1].split("<")[0] == "ended"
    assert 'href="/admin/shop/codes/SUMMER/"' not in html
    add(customer.client, "book")
    assert "There is no discount code SUMMER" in place(customer.client, discount_code="summer").content.decode()
    assert staff.get("/admin/shop/codes/SUMMER/").status_code == 302  # ended: nothing to change


def test_changing_a_code_needs_the_catalog_role_and_a_real_code(staff, shop_stock) -> None:
    access.create_discount_code("KEEP", percent_off=5)
    support = Client()
    support.force_login(make_user("sue@example.com", staff=True, roles=["support"]))
    assert support.get("/admin/shop/codes/KEEP/").status_code == 403
    assert support.post("/admin/shop/codes/KEEP/", {"max_uses": "1"}).status_code == 403
    assert support.post("/admin/shop/codes/KEEP/end/").status_code == 403
    code = access.get_discount_code("KEEP")
    assert (code.MaxUses, code.Active) == (None, "yes")
    for url in ("/admin/shop/codes/NOPE/", "/admin/shop/codes/a%23b/"):
        assert staff.get(url).status_code == 404, url
    assert staff.post("/admin/shop/codes/NOPE/end/").status_code == 404
    assert staff.get("/admin/shop/codes/KEEP/end/").status_code == 405


def test_the_staff_order_page_shows_the_shipping_address(staff, paid_order) -> None:
    customer, order_id = paid_order
    address = access.get_order_details_by_order_id(order_id).order.ShippingAddress
    html = staff.get(f"/admin/shop/orders/{order_id}/").content.decode()
    shown = html.split('data-testid="shipping-address">')[1].split("</p>")[0]
    assert address.Street in shown and address.ZipCode in shown and address.City in shown and address.Country in shown
