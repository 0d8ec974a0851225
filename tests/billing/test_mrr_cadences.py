"""MRR counts a month's share of every cadence (docs/ANALYTICS.md): a yearly price / 12,
every 3 months / 3, a week's price x 52 / 12, each rounded half up once, and a for-ever
coupon off the normalised amount."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from billing.access.events import subscription_snapshot
from billing.analytics.history import Change, CouponTerms, build_history
from billing.analytics.mrr import mrr_at
from billing.models import AuditAction, Subscription
from billing.rules.pricing import monthly_amount

D = date(2027, 3, 1)


def test_worked_examples() -> None:
    assert monthly_amount(12_000, "year", 1) == 1_000
    assert monthly_amount(999) == 999 == monthly_amount(999, "month", 1)
    assert monthly_amount(3_000, "month", 3) == 1_000
    assert monthly_amount(1_000, "week", 1) == 4_333  # 43.333... a month
    assert monthly_amount(1_000, "week", 2) == 2_167  # 21.666... rounded half up
    assert monthly_amount(100, "day", 1) == 3_042  # 365 / 12 = 30.4166...
    assert monthly_amount(120_000, "year", 2) == 5_000


@given(amount=st.integers(0, 10**12), months=st.integers(1, 36))
def test_a_month_of_months_is_the_amount_over_their_count(amount: int, months: int) -> None:
    share = monthly_amount(amount, "month", months)
    assert abs(share * months - amount) <= months / 2 + 1e-9  # rounded once, half up
    assert monthly_amount(amount * months, "month", months) == amount


def _history(snapshot: dict, coupons: dict | None = None):
    changes = [Change(D, AuditAction.SUBSCRIPTION_CREATED, None, snapshot)]
    return build_history("acc", "SUB#y", created=D, changes=changes, current={}, coupons=coupons or {})


def test_a_yearly_subscriptions_snapshot_counts_a_twelfth() -> None:
    sub = Subscription(PK="ACC#a", SK="SUB#s#SKU#PRO", Email="a@example.com", SKU="PRO", PaymentDay=1,
                       PaymentAmount=12_000, Currency="USD", CreatedDate="2027-03-01", Interval="year",
                       IntervalCount=1, Status="active")
    snapshot = subscription_snapshot(sub)
    assert (snapshot["Interval"], snapshot["IntervalCount"]) == ("year", 1)
    assert mrr_at([_history(snapshot)], D + timedelta(days=5)) == {"USD": 1_000}


def test_a_monthly_snapshot_keeps_its_shape_and_amount() -> None:
    sub = Subscription(PK="ACC#a", SK="SUB#s#SKU#PRO", Email="a@example.com", SKU="PRO", PaymentDay=1,
                       PaymentAmount=999, Currency="USD", CreatedDate="2027-03-01", Status="active")
    snapshot = subscription_snapshot(sub)
    assert "Interval" not in snapshot
    assert mrr_at([_history(snapshot)], D + timedelta(days=5)) == {"USD": 999}


def test_a_for_ever_coupon_comes_off_the_months_share() -> None:
    snapshot = {"Status": "active", "PaymentAmount": 12_000, "Currency": "USD", "PaidThroughDate": None,
                "Interval": "year", "IntervalCount": 1, "Coupon": "LOYAL", "CouponPaymentsLeft": None}
    built = _history(snapshot, {"LOYAL": CouponTerms(percent_off=25)})
    assert built.states[0].recurring_discount == 250
    assert mrr_at([built], D + timedelta(days=5)) == {"USD": 750}
