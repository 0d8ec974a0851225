"""Hypothesis: no posted input makes the subscribe or change-day forms answer 500."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access
from tests.builders import subscribe

pytestmark = pytest.mark.django_db

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Text without NUL (Django's test client refuses it before the view runs), ints of any size.
anything = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from(["", "4242 4242 4242 4242", "4000000000000002", "NEWS-DAILY", "OLD-MAG", "31", "13"]),
)


@FUZZ
@given(product=anything, day=anything, number=anything, month=anything, year=anything, cvc=anything,
       address=anything)
def test_subscribe_form_never_500s(customer, product, day, number, month, year, cvc, address) -> None:
    response = customer.client.post("/subscribe/", {
        "product": product, "payment_day": day, "card_number": number, "exp_month": month,
        "exp_year": year, "cvc": cvc, "billing_address": address,
    })
    assert response.status_code in (200, 302)
    if response.status_code == 200:
        # whatever was typed, the card-number and CVC inputs come back empty
        for name in ("card_number", "cvc"):
            tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', response.content.decode())
            assert tag and "value=" not in tag.group(0)


@FUZZ
@given(day=anything, version=anything)
def test_change_day_form_never_500s(customer, day, version) -> None:
    sub = subscribe(customer)
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/",
                                    {"payment_day": day, "version": version})
    assert response.status_code in (200, 302, 409)  # 409: a version not the stored one (page drawn again)
    stored = access.get_subscription(customer.account_id, sub.sub_id)
    assert 1 <= stored.PaymentDay <= 31
