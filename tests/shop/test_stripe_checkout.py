"""The shop's checkout on Stripe (localstripe): a card the bank wants confirmed (3-D
Secure, 4000 0027 6000 3184) leaves the order waiting, its stock reserved, until the
customer confirms it on /shop/orders/<id>/authenticate/: then paid; refused, rolled back;
never confirmed, cancelled at Stripe and rolled back by ``reconcile_checkouts``."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from shop import access
from shop.reconcile import reconcile
from tests.shop import test_shop_pages as pages
from tests.stripe_server import authenticate_payment_in_browser, confirm_setup_in_browser

pytestmark = pytest.mark.django_db

shop_site, shop_stock, ann = pages.shop_site, pages.shop_stock, pages.ann
SCA_CARD = "4000002760003184"


def available(product_id: str) -> int:
    return sum(s.Available for s in access.get_product_inventory_by_product_id(product_id))


def check_out_with(client, localstripe, number: str):
    pages.add(client, "album", 2)
    page = client.get("/shop/checkout/")
    secret = re.search(r'data-client-secret="([^"]+)"', page.content.decode()).group(1)
    confirm_setup_in_browser(localstripe, secret, number)  # the card typed into Stripe.js, saved
    token = re.search(rb'name="token" value="([0-9a-f]+)"', page.content).group(1).decode()
    return client.post("/shop/checkout/", {"token": token, **pages.ADDRESS, "setup_intent": secret.split("_secret_")[0]})


def waiting_order(ann, localstripe) -> tuple[str, str]:
    before = available("album")
    response = check_out_with(ann.client, localstripe, SCA_CARD)
    assert response.status_code == 302
    match = re.fullmatch(r"/shop/orders/([0-9a-f]+)/authenticate/", response["Location"])
    assert match, response["Location"]
    order_id = match.group(1)
    order = access.get_order_details_by_order_id(order_id).order
    assert order.Status == "pending_payment" and available("album") == before - 2  # kept for the customer
    page = ann.client.get(response["Location"])
    assert page.status_code == 200 and "Confirm the payment with your bank" in page.content.decode()
    secret = re.search(r'data-client-secret="([^"]+)"', page.content.decode()).group(1)
    return order_id, secret


def test_a_payment_confirmed_with_the_bank_completes_the_order(ann, stripe_gateway, localstripe) -> None:
    order_id, secret = waiting_order(ann, localstripe)
    authenticate_payment_in_browser(localstripe, secret)
    done = ann.client.post(f"/shop/orders/{order_id}/authenticate/", follow=True)
    assert "is placed and paid" in done.content.decode()
    order = access.get_order_details_by_order_id(order_id).order
    assert order.Status == "paid" and order.ChargeId == secret.split("_secret_")[0]
    # the page again (the back button) only shows the order
    assert ann.client.get(f"/shop/orders/{order_id}/authenticate/")["Location"] == f"/shop/orders/{order_id}/"


def test_a_refused_confirmation_rolls_the_order_back(ann, stripe_gateway, localstripe) -> None:
    before = available("album")
    order_id, secret = waiting_order(ann, localstripe)
    authenticate_payment_in_browser(localstripe, secret, success=False)
    done = ann.client.post(f"/shop/orders/{order_id}/authenticate/", follow=True)
    assert "nothing was charged" in done.content.decode()
    assert access.get_order_details_by_order_id(order_id).order.Status == "declined"
    assert available("album") == before  # the stock back


def test_an_order_never_confirmed_is_cancelled_at_stripe_and_rolled_back(ann, stripe_gateway, localstripe) -> None:
    before = available("album")
    order_id, secret = waiting_order(ann, localstripe)
    # the customer is waiting on the page: a run within the grace period leaves it alone
    assert reconcile().still_pending == [] and access.get_order_details_by_order_id(order_id).order.Status == \
        "pending_payment"
    summary = reconcile(older_than=timedelta(0))  # the grace period over
    assert summary.rolled_back == [f"checkout {order_id}"]
    order = access.get_order_details_by_order_id(order_id).order
    assert order.Status == "declined" and order.DeclineCode == "authentication_required"
    assert available("album") == before
    assert stripe_gateway.charge_status(secret.split("_secret_")[0]).status == "declined"  # cancelled at Stripe
    # a confirmation that comes too late charges nothing: Stripe refuses it
    late = authenticate_payment_in_browser(localstripe, secret)
    assert late.get("status") != "succeeded"
