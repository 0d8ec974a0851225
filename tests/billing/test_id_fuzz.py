"""Ids are checked before they reach a key (docs/TABLE.md): every id-taking URL answers 404
for an id that cannot be in a key (too long, a '#', a control character), on both engines,
for the customer's pages and the staff's. The check lives in one place: the key templates (``InvalidKey``),
turned into "not found" by the access layer."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access
from billing.models import Subscription
from core.dynamo.keys import InvalidKey, check_id
from tests.builders import make_customer, subscribe

pytestmark = pytest.mark.django_db

BAD_IDS = ["x" * 1100, "a#b", "#", "x" * 2100, "ACC#CATALOG", "abc\x01def", "REC#2026-11-15#SKU#NEWS#SUB#" + "9" * 1100]


def portal_urls(sub_id: str, receipt: str) -> list[str]:
    return [
        f"/subscriptions/{sub_id}/", f"/subscriptions/{sub_id}/payment-day/", f"/subscriptions/{sub_id}/card/",
        f"/subscriptions/{sub_id}/cancel/", f"/subscriptions/{sub_id}/cancelled/", f"/receipts/{receipt}/",
        f"/subscriptions/{sub_id}/pause/",
    ]


def portal_post_urls(sub_id: str) -> list[str]:
    """Buttons, never pages: a GET is refused (405) before any look-up."""
    return [f"/subscriptions/{sub_id}/keep/", f"/subscriptions/{sub_id}/resume/"]


def staff_urls(account: str, sub_id: str, receipt: str, sku: str) -> list[str]:
    sub = f"/admin/staff/accounts/{account}/subscriptions/{sub_id}"
    return [
        f"/admin/staff/accounts/{account}/", f"{sub}/cancel/", f"{sub}/payment-day/", f"{sub}/retry/",
        f"{sub}/pause/", f"{sub}/resume/",
        f"/admin/staff/accounts/{account}/receipts/{receipt}/refund/",
        f"/admin/staff/products/{sku}/edit/", f"/admin/staff/products/{sku}/retire/",
    ]


@pytest.fixture
def people(table):
    customer = make_customer("ann@example.com")
    sub = subscribe(customer)
    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw"))
    return customer, sub, staff


@pytest.mark.parametrize("bad", BAD_IDS)
def test_every_id_taking_url_answers_404_for_an_impossible_id(people, bad) -> None:
    customer, sub, staff = people
    q = quote(bad, safe="")
    for url in portal_urls(q, q):
        assert customer.client.get(url).status_code == 404, url[:80]
        # A read-only page refuses a POST before it looks anything up (405): never a 500.
        assert customer.client.post(url).status_code in (404, 405), url[:80]
    for url in portal_post_urls(q):
        assert customer.client.get(url).status_code == 405, url[:80]
        assert customer.client.post(url).status_code == 404, url[:80]
    # a bad account id with a real subscription id, and a real account with bad other ids
    urls = staff_urls(q, sub.sub_id, q, q) + staff_urls(customer.account_id, q, q, q)[1:]
    for url in urls:
        for method in ("get", "post"):
            response = getattr(staff, method)(url)
            assert response.status_code == 404, (method, url[:80], response.status_code)


def test_the_real_ids_still_work(people) -> None:
    customer, sub, staff = people
    assert customer.client.get(f"/subscriptions/{sub.sub_id}/").status_code == 200
    assert staff.get(f"/admin/staff/accounts/{customer.account_id}/").status_code == 200


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(min_size=0, max_size=300))
def test_check_id_accepts_exactly_what_a_key_can_hold(value: str) -> None:
    bad = len(value) > 100 or "#" in value or any(ord(c) < 32 or ord(c) == 127 for c in value)
    if bad:
        with pytest.raises(InvalidKey):
            check_id("id", value)
        with pytest.raises(InvalidKey):
            Subscription.sk(sub_id=value, sku="NEWS")
    else:
        assert check_id("id", value) == value


def test_reads_with_impossible_ids_find_nothing(table) -> None:
    for bad in BAD_IDS:
        assert access.get_account(bad) is None
        assert access.get_subscription("abc", bad) is None and access.get_subscription(bad, "abc") is None
        assert access.get_receipt("abc", bad) is None and access.get_unexpired_receipt(bad, "REC#x") is None
        assert access.get_product(bad) is None
        assert access.get_subscriptions_by_account(bad) == [] and access.get_events_by_account(bad) == []
        assert access.get_account_collection(bad).account is None
