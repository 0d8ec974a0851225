"""A coupon's ``status`` in the API is whether it can be given today, by the rule that
gives it (``rules.coupons.refusal``, through ``access.check_coupon``): a coupon whose last
valid day has passed is ``expired``, never ``active``, though its stored status still says
active."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from hypothesis import given
from hypothesis import strategies as st

from billing import access
from billing.exceptions import CouponRefused
from billing.models import Coupon, CouponStatus
from billing.rules.api_objects import coupon_object
from core.pages import today
from tests.api.conftest import ApiClient

DAY = date(2027, 3, 10)
offsets = st.none() | st.integers(-3, 3)


@given(status=st.sampled_from(list(CouponStatus)), valid_from=offsets, valid_until=offsets,
       max_uses=st.none() | st.integers(1, 3), uses=st.integers(0, 4), currency=st.none() | st.just("EUR"))
def test_the_status_shown_is_whether_the_coupon_can_be_given_that_day(status, valid_from, valid_until, max_uses,
                                                                        uses, currency) -> None:
    coupon = Coupon(Coupon.pk(), Coupon.sk(code="C1"), Code="C1", Duration="once", Status=status, Uses=uses,
                    MaxUses=max_uses, PercentOff=None if currency else 10, AmountOff=100 if currency else None,
                    Currency=currency, CreatedDate="2027-01-01",
                    ValidFrom=(DAY + timedelta(days=valid_from)).isoformat() if valid_from is not None else None,
                    ValidUntil=(DAY + timedelta(days=valid_until)).isoformat() if valid_until is not None else None)
    try:
        access.check_coupon(coupon, "C1", currency=currency or "USD", day=DAY)
        why = None
    except CouponRefused as refused:
        why = refused.reason
    shown = coupon_object(coupon, DAY)
    assert shown["status"] == (why or "active")
    assert shown["stored_status"] == status


@pytest.mark.django_db
def test_a_coupon_past_its_last_day_is_shown_expired(read_api: ApiClient, moto_table) -> None:
    day = today()
    access.create_coupon("SPRING", percent_off=10, valid_until=day + timedelta(days=2), actor="test")
    access.create_coupon("SUMMER", percent_off=10, valid_from=day + timedelta(days=10), actor="test")
    access.create_coupon("ALWAYS", percent_off=10, actor="test")
    assert read_api.get("/coupons/SPRING").json()["status"] == "active"
    with time_machine.travel(datetime.now(tz=UTC) + timedelta(days=5)):
        assert read_api.get("/coupons/SPRING").json()["status"] == "expired"
        statuses = {c["code"]: c["status"] for c in read_api.get("/coupons").json()["data"]}
        assert statuses == {"SPRING": "expired", "SUMMER": "not_yet", "ALWAYS": "active"}
        assert read_api.get("/coupons/SPRING").json()["stored_status"] == "active"
