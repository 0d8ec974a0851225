"""The demo data reconciles: ``reconcile_payments`` over the month so far finds every
charge with its receipt and every receipt with its charge (exit 0), on fresh demo data and
once customers have paid this month (their charges name the accounts whose receipts the
reverse check reads). The seed charges as the payment run does (its metadata names the
receipt), and a receipt a coupon took whole (0.00, no charge by design) is not a "receipt
without charge"."""

from __future__ import annotations

from datetime import date
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access
from billing.actions import subscriptions as subscribing
from billing.management.commands.seed_demo import CUSTOMER_EMAIL
from core.payments.gateway import get_gateway
from tests.builders import card, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 20)  # the demo customer's music (day 15) was paid this month, on the 15th


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def reconcile_month() -> str:
    return run("reconcile_payments", "--from", TODAY.replace(day=1).isoformat(), "--to", TODAY.isoformat())


@pytest.fixture
def seeded(moto_table):
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        run("seed_demo")
        yield


def test_fresh_demo_data_reconciles_over_the_month_so_far(seeded) -> None:
    with time_machine.travel(f"{TODAY.isoformat()} 13:00Z", tick=False):
        out = reconcile_month()
    assert out.splitlines()[-1].startswith(f"reconciled {TODAY.replace(day=1)}..{TODAY}:"), out
    assert " 0 difference(s)" in out, out


def test_the_demo_reconciles_once_a_customer_paid_and_a_coupon_took_a_payment_whole(seeded) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username=CUSTOMER_EMAIL)
    account = access.get_account(access.get_account_id_for_user(user.pk))
    access.create_coupon("FREEMONTH", actor="staff", percent_off=100, duration="once", max_uses=5)
    product = access.get_product("NEWS-DAILY")
    with time_machine.travel(f"{TODAY.isoformat()} 13:00Z", tick=False):
        paid = subscribing.subscribe(account, sku="NEWS-DAILY", product_name=product.Name, payment_day=20,
                                     amount=int(product.PaymentAmount), currency=product.Currency, card=card(),
                                     today=TODAY, actor=CUSTOMER_EMAIL)
        free = subscribing.subscribe(account, sku="NEWS-DAILY", product_name=product.Name, payment_day=20,
                                     amount=int(product.PaymentAmount), currency=product.Currency, card=card(),
                                     today=TODAY, actor=CUSTOMER_EMAIL, coupon=access.get_coupon("FREEMONTH"))
        assert paid.started and free.started
        [zero] = receipts_of(free.sub)
        assert zero.ProcessedAmount == 0 and not zero.ChargeId  # the coupon took it whole: nothing charged
        assert not get_gateway().charges_made(sub_id=free.sub.sub_id)
        out = reconcile_month()
    assert " 0 difference(s)" in out, out


def test_a_receipt_whose_charge_is_missing_is_still_reported(seeded) -> None:
    """The check still bites: a paid receipt with no charge at the processor."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username=CUSTOMER_EMAIL)
    account = access.get_account(access.get_account_id_for_user(user.pk))
    product = access.get_product("NEWS-DAILY")
    with time_machine.travel(f"{TODAY.isoformat()} 13:00Z", tick=False):
        paid = subscribing.subscribe(account, sku="NEWS-DAILY", product_name=product.Name, payment_day=20,
                                     amount=int(product.PaymentAmount), currency=product.Currency, card=card(),
                                     today=TODAY, actor=CUSTOMER_EMAIL)
        access.create_receipt(paid.sub, billing_date=date(2027, 3, 2), amount=500, currency="USD",
                              charge_id="ch_made_up", retention_days=400, period_end=date(2027, 3, 19))
        with pytest.raises(CommandError, match="1 difference"):
            reconcile_month()
