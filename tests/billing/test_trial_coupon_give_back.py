"""A limited coupon used by a free trial that ends before any payment gives its use back
(the coupon discounted nothing), as a first payment that fails does: the customer's
"cancel now" and staff's cancel. A trial cancelled after its first payment, or at the end
of its free days (which can still be kept, with the coupon), keeps the use counted. On
moto and DynamoDB Local."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
import time_machine

from billing import access, batches
from billing.actions import lifecycle
from billing.actions import subscriptions as subscribing
from billing.models import AuditAction
from tests.builders import card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 5, 10)
TRIAL_DAYS = 14


@pytest.fixture
def catalog(table) -> None:
    access.create_product("GYM", "City Gym", 2500, "USD", trial_days=TRIAL_DAYS)
    access.create_coupon("ONCE", actor="staff", percent_off=20, duration="repeating", duration_payments=2,
                         max_uses=1)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def trial(email: str = "trial@example.com"):
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account(email), sku="GYM", product_name="City Gym", payment_day=MADE.day, amount=2500,
            currency="USD", card=card(), today=MADE, actor="customer", coupon=access.get_coupon("ONCE"),
            trial_days=TRIAL_DAYS)
    assert started.sub.TrialEnd and started.sub.CouponCode == "ONCE"
    return started.sub


def uses() -> int:
    return int(access.get_coupon("ONCE").Uses)


def test_a_trial_cancelled_now_before_any_payment_gives_the_use_back(catalog) -> None:
    sub = trial()
    assert uses() == 1
    day = MADE + timedelta(days=3)
    with at(day):
        lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="not_using")
    assert uses() == 0 and not receipts_of(sub)
    # the coupon's one use is free again: another customer's trial takes it
    trial("next@example.com")
    assert uses() == 1


def test_staff_cancelling_a_trial_gives_the_use_back_once(catalog) -> None:
    sub = trial()
    with at(MADE + timedelta(days=1)):
        subscribing.cancel(fresh(sub), actor="staff", reason="staff", action=AuditAction.STAFF_CANCEL)
        with pytest.raises(access.ConditionFailed):  # a repeat is refused: no second give-back
            subscribing.cancel(fresh(sub), actor="staff", reason="staff", action=AuditAction.STAFF_CANCEL)
    assert uses() == 0


def test_a_trial_cancelled_after_its_first_payment_keeps_the_use(catalog) -> None:
    sub = trial()
    first = MADE + timedelta(days=TRIAL_DAYS)
    with at(first):
        assert batches.run_payments(run_date=first, workers=1).counts["paid"] == 1
    [receipt] = receipts_of(sub)
    assert receipt.CouponCode == "ONCE" and receipt.DiscountAmount
    with at(first + timedelta(days=2)):
        lifecycle.cancel_now(fresh(sub), today=first + timedelta(days=2), actor="customer", reason="not_using")
    assert uses() == 1


def test_a_trial_cancelled_at_the_end_of_its_free_days_keeps_the_use(catalog) -> None:
    """It can be kept until then, coupon and all: the use stays counted."""
    sub = trial()
    day = MADE + timedelta(days=3)
    with at(day):
        lifecycle.cancel_at_period_end(fresh(sub), today=day, actor="customer", reason="not_using")
        assert uses() == 1
        lifecycle.keep(fresh(sub), today=day, actor="customer")
    assert uses() == 1 and fresh(sub).CouponCode == "ONCE"
