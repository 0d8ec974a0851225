"""Authorisation matrix: customer B asking for any of customer A's objects gets 404.

The account id comes from the session, never the URL: an id from another account is
simply not in B's partition.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse

from billing import access
from core.pages import today
from tests.builders import GOOD_CARD, subscribe

pytestmark = pytest.mark.django_db

# (url name, method, data) for every URL that takes an id
ID_URLS = [
    ("subscription", "get", None),
    ("change_day", "get", None),
    ("change_day", "post", {"payment_day": "3"}),
    ("replace_card", "get", None),
    ("replace_card", "post", GOOD_CARD),
    ("cancel", "get", None),
    ("cancel", "post", {}),
    ("cancelled", "get", None),
    ("keep", "post", {}),
    ("pause", "get", None),
    ("pause", "post", {"how": "open"}),
    ("resume", "post", {}),
    ("receipt", "get", None),
]


@pytest.fixture
def a_objects(customer):
    sub = subscribe(customer)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch_a",
                                       retention_days=settings.RECEIPT_RETENTION_DAYS)
    return {"sub": sub, "receipt": receipt}


def url_for(name: str, objects: dict) -> str:
    # a receipt by its number (its key URL redirects there; test_portal_receipt_pages)
    arg = objects["receipt"].url_id if name == "receipt" else objects["sub"].sub_id
    return reverse(name, args=[arg])


@pytest.mark.parametrize(("name", "method", "data"), ID_URLS)
def test_another_customers_object_is_404(customer, other_customer, a_objects, name, method, data) -> None:
    url = url_for(name, a_objects)
    # A can reach it (so the 404 below is about ownership, not a broken URL)
    own = getattr(customer.client, method)(url, data or {})
    # 409: the owner's page, answering that the form is not for the subscription as it is
    # (Keep on one that was never cancelled)
    assert own.status_code in (200, 302, 409)
    if method == "post":  # A's own post changed things; make a fresh object for B to try
        a_objects = {"sub": subscribe(customer), "receipt": a_objects["receipt"]}
        url = url_for(name, a_objects)
    response = getattr(other_customer.client, method)(url, data or {})
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
    stored = access.get_subscription(customer.account_id, a_objects["sub"].sub_id)
    assert stored.is_live and stored.PaymentDay == 15 and stored.PaymentDetails.Last4 == "4242"
    # Creating the test data records its own events (M6): none besides those.
    assert not [e for e in access.get_events_by_account(customer.account_id) if e.Subject == stored.SK
                and e.Action not in ("subscription.created", "payment.succeeded")]


def test_bs_dashboard_and_receipts_do_not_show_as(customer, other_customer, a_objects) -> None:
    for url in ["/", "/receipts/", "/receipts/export.csv"]:
        body = other_customer.client.get(url).content.decode()
        assert a_objects["sub"].sub_id not in body and "ch_a" not in body


def test_ids_with_key_characters_are_404(customer) -> None:
    for url in ["/subscriptions/x%23SKU%23Y/", "/receipts/ACC%23abc/", "/receipts/REC%23/"]:
        assert customer.client.get(url).status_code == 404
