"""Pins down what ``take_payment`` (billing/operations/payments.py) asks of the gateway
and of the usage billing: a renewal is charged under its period's key with the metadata
the reconciliation and the receipt read back (whose the charge is, for which days, what
price, which attempt); each retry under its own attempt's key; the gateway and the seller
a run hands in are the ones used (no second read of the seller's profile); and a
subscription with metered usage has its usage period closed only when its payment is
really taken, never by a dry run nor before its day. A payment a coupon takes whole is
recorded as a charged one is: numbered in the run's own series and invoiced by the seller
the run read; the usage a payment bills is priced once, for its charge, and its receipt
keeps it so; and the retry of a first period that a run charged is a renewal's
(off-session: past due and "action required" when the bank asks, never ``incomplete``)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.core import mail

from billing import access
from billing.access.coupons import coupon_attributes
from billing.access.usage import billed_through
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation, SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.pricing import PriceTerms
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD, SimulatedGateway
from tests.billing.test_action_required import following, paid_from_the_same_series
from tests.billing.test_money_path_mutants_7 import run_parts_in_a_series_of_their_own
from tests.builders import (
    DECLINED_NUMBER,
    GOOD_NUMBER,
    card,
    due_subscription,
    fresh,
    make_account,
    make_subscription,
    receipts_of,
    seed_due,
)

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)  # pays 15 March to 14 April
LAST_DAY = date(2027, 4, 14)


def test_a_renewal_is_charged_under_its_period_s_key_with_the_metadata_read_back(moto_table) -> None:
    """Everything the reconciliation needs to find the account, the subscription, the
    period, the price and the attempt from the gateway's side alone, with the tax charged."""
    [sub] = seed_due(1, due=D)
    out = payments.take_payment(sub, run_date=D)
    assert (out.status, out.amount, out.currency, out.attempt) == (PaymentStatus.PAID, 999, "USD", 0)
    assert (out.period, out.period_end, out.due) == (D, LAST_DAY, D)
    [charge] = get_gateway().charges_made()
    assert charge["idempotency_key"] == "s000000:2027-03-15"
    assert (charge["charge_id"], charge["amount"], charge["status"]) == (out.charge_id, 999, "succeeded")
    assert charge["metadata"] == {
        "account_id": "accts000000", "sub_id": "s000000", "sku": "NEWS-DAILY",
        "billing_date": "2027-03-15", "period_start": "2027-03-15", "period_end": "2027-04-14",
        "attempt": "0", "payment_day": "15", "price": "999",
        "net": "812", "tax": "187", "tax_country": "IE", "tax_rate": "23", "tax_treatment": "domestic",
        "prices_include_tax": "1",
    }
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == out.charge_id and receipt.SKU == "NEWS-DAILY"


def test_each_retry_is_charged_under_its_own_attempt(moto_table) -> None:
    """A card declined on its day and on two retries: three charges, the first under the
    period's key, then retry 1 and retry 2 (counted from the subscription's retries, so a
    replay of one attempt never answers another), each named by its attempt."""
    [sub] = seed_due(1, due=D, number=DECLINED_NUMBER)
    run, attempts = D, []
    for _ in range(3):
        out = payments.take_payment(fresh(sub), run_date=run)
        assert out.status == PaymentStatus.DECLINED and out.period == D
        attempts.append(out.attempt)
        run = date.fromisoformat(fresh(sub).NextPaymentDate)
    assert attempts == [0, 1, 2]
    charges = sorted(get_gateway().charges_made(), key=lambda charge: charge["metadata"]["attempt"])
    assert [(c["idempotency_key"], c["metadata"]["attempt"], c["metadata"]["period_start"]) for c in charges] == [
        ("s000000:2027-03-15", "0", "2027-03-15"),
        ("s000000:2027-03-15:retry1", "1", "2027-03-15"),
        ("s000000:2027-03-15:retry2", "2", "2027-03-15"),
    ]


def test_the_gateway_handed_in_is_the_one_charged(moto_table, tmp_path) -> None:
    """A gateway of its own (another ledger, which alone knows the card): the payment is
    made there, and nothing at the configured gateway."""
    own = SimulatedGateway(ledger_path=str(tmp_path / "own-ledger.sqlite3"), latency_ms=0)
    token = own.tokenize_card(GOOD_NUMBER, 12, 2030, "123")
    sub = due_subscription(0, due=D, card=token)
    access.batch_items([sub])
    out = payments.take_payment(fresh(sub), run_date=D, gateway=own)
    assert (out.status, out.amount) == (PaymentStatus.PAID, 999)
    assert [c["charge_id"] for c in own.charges_made()] == [out.charge_id]
    assert get_gateway().charges_made() == []


def test_the_seller_handed_in_is_not_read_again(moto_table, ddb_requests) -> None:
    """A run reads the seller's profile once and hands it in: a renewal then makes no read
    at all (the receipt's transaction and the advance), and one that reads the profile
    itself reads it once (the charge and its receipt are taxed by the same profile)."""
    first, second = (fresh(sub) for sub in seed_due(2, due=D))
    seller = access.invoice_seller()
    ddb_requests.reset()
    assert payments.take_payment(first, run_date=D, seller=seller).status == PaymentStatus.PAID
    assert ddb_requests.by_name() == {"TransactWriteItems": 1, "UpdateItem": 1}
    ddb_requests.reset()
    assert payments.take_payment(second, run_date=D).status == PaymentStatus.PAID
    assert ddb_requests.by_name() == {"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 1}


def _metered_sub():
    """A subscription paid on the 15th with a metered price (a cent a call) besides its fee,
    last paid 15 February, due 15 March."""
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(1)), actor="test",
                                    nickname="a cent a call", meter="api_calls")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15),
                              next_reminder=date(2027, 3, 8), last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price.PriceId, actor="test")


def test_the_usage_period_is_closed_only_by_the_payment_on_its_day(moto_table) -> None:
    """Asked the day before, or in a dry run on its day, nothing is charged and the usage
    stays open to late events; the payment on its day closes it through the day before
    its period (what it bills), then charges."""
    with time_machine.travel(datetime(2027, 3, 14, 12, tzinfo=UTC), tick=False):
        sub = _metered_sub()
        early = payments.take_payment(fresh(sub), run_date=date(2027, 3, 14))
        assert (early.status, early.reason) == (PaymentStatus.SKIPPED, "not due until 2027-03-15")
        assert billed_through(sub.account_id, "api_calls") is None
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        dry = payments.take_payment(fresh(sub), run_date=D, dry_run=True)
        assert (dry.status, dry.reason, dry.amount) == (PaymentStatus.DRY_RUN, "would charge 9.99 USD", 999)
        assert billed_through(sub.account_id, "api_calls") is None
        assert get_gateway().charges_made() == []
        paid = payments.take_payment(fresh(sub), run_date=D)
        assert (paid.status, paid.amount) == (PaymentStatus.PAID, 999)
        assert billed_through(sub.account_id, "api_calls") == "2027-03-14"
        # The usage billed with the fee (none used: nothing owed for it) rides on the charge.
        [charge] = get_gateway().charges_made()
        assert {key: charge["metadata"].get(key) for key in (
            "usage_start", "usage_end", "usage_meter", "usage_quantity", "usage_amount")} == {
            "usage_start": "2027-02-15", "usage_end": "2027-03-15", "usage_meter": "api_calls",
            "usage_quantity": "0", "usage_amount": "0"}


def test_a_renewal_of_several_seats_names_them_on_its_charge(moto_table) -> None:
    """Three seats at 10.00: the charge's metadata names the seats and their price, which
    the reconciliation reads back to write the invoice's line ("× 3") from the gateway's
    side alone; one seat names none (above)."""
    sub = due_subscription(0, due=D, card=card(), amount=3000)
    sub.Quantity, sub.UnitAmount = 3, 1000
    access.batch_items([sub])
    out = payments.take_payment(fresh(sub), run_date=D)
    assert (out.status, out.amount) == (PaymentStatus.PAID, 3000)
    [charge] = get_gateway().charges_made()
    assert (charge["metadata"]["quantity"], charge["metadata"]["unit_amount"]) == ("3", "1000")


# --- a payment a coupon takes whole, in a run ---------------------------------------------


def _free_for_ever(sub):
    """``sub`` with a coupon that takes every payment whole (100 % off, forever)."""
    coupon = access.create_coupon("FREE", actor="staff", percent_off=100, duration="forever")
    for name, value in coupon_attributes(coupon).items():
        setattr(sub, name, value)
    access.batch_items([sub])
    return fresh(sub)


def test_a_payment_a_coupon_takes_whole_is_numbered_and_invoiced_by_the_run(moto_table) -> None:
    """Nothing to charge, yet a receipt all the same: numbered in the run's own series (the
    number after the one the run gave last) and invoiced by the seller as the run read it at
    its start (before staff renamed the business), as a charged payment's receipt is."""
    sub = _free_for_ever(due_subscription(0, due=D, card=card()))
    numbers, seller = run_parts_in_a_series_of_their_own()
    before = paid_from_the_same_series(numbers, D)
    out = payments.take_payment(sub, run_date=D, numbers=numbers, seller=seller)
    assert (out.status, out.amount, out.charge_id) == (PaymentStatus.PAID, 0, None)
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.Number, receipt.Seller.Name) == (0, following(before), "rpay Ltd")
    assert fresh(sub).NextPaymentDate == "2027-04-15"


@pytest.mark.parametrize(("free", "charged"), [(True, 0), (False, 999)])
def test_a_payment_with_usage_prices_its_usage_once(moto_table, ddb_requests, free: bool, charged: int) -> None:
    """A metered payment, charged or taken whole by a coupon (a receipt of 0): its receipt
    keeps the usage as it was priced for the charge, never reading the price a second time."""
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        sub = _free_for_ever(_metered_sub()) if free else fresh(_metered_sub())
        seller = access.invoice_seller()
        ddb_requests.reset()
        out = payments.take_payment(sub, run_date=D, seller=seller)
    assert (out.status, out.amount) == (PaymentStatus.PAID, charged)
    assert len(get_gateway().charges_made()) == (0 if free else 1)
    # Read once each, for the charge: the metered price and its meter.
    assert ddb_requests.by_name()["GetItem"] == 2
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.UsageMeter, receipt.UsageQuantity) == (charged, "api_calls", 0)


# --- what a renewal's receipt is made of, in a run --------------------------------------------


def test_a_renewal_in_a_run_is_numbered_in_the_runs_own_series(moto_table) -> None:
    """A run's receipt numbers come from its own series (one per worker), not from the
    series a receipt written on its own takes: the first renewal it records takes the
    series' first number."""
    [sub] = seed_due(1, due=D)
    numbers, seller = run_parts_in_a_series_of_their_own()
    with time_machine.travel(datetime(2027, 3, 15, 9, tzinfo=UTC), tick=False):
        first_of_the_run = numbers.number(numbers.draw(D.year))
        out = payments.take_payment(fresh(sub), run_date=D, numbers=numbers, seller=seller)
    assert out.status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    assert (receipt.Number, receipt.Seller.Name) == (first_of_the_run, "rpay Ltd")


# --- the first period, charged by a run ------------------------------------------------------


def test_a_retry_of_a_first_period_a_run_charged_waits_as_a_renewal_does(moto_table) -> None:
    """The subscribe page died before the first charge; the next day's run made it and the
    card was declined. Its retry (a new card, which the bank asks the cardholder to confirm)
    is no longer the customer's first charge on the page but the merchant's, off-session: the
    subscription goes past due, "action required", the customer asked to confirm that very
    charge, and never back to ``incomplete`` as an unconfirmed first payment would."""
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        sub = make_subscription(make_account(), today=D, card=card(DECLINED_NUMBER))
    with time_machine.travel(datetime(2027, 3, 16, 9, tzinfo=UTC), tick=False):
        declined = payments.take_payment(fresh(sub), run_date=date(2027, 3, 16))
    assert (declined.status, declined.period, declined.attempt) == (PaymentStatus.DECLINED, D, 0)
    access.replace_card(fresh(sub), card(AUTHENTICATING_TEST_CARD))
    retry_day = declined.next_payment
    mail.outbox.clear()
    with time_machine.travel(datetime(retry_day.year, retry_day.month, retry_day.day, 9, tzinfo=UTC), tick=False):
        retried = payments.take_payment(fresh(sub), run_date=retry_day)
    assert (retried.status, retried.period, retried.attempt) == (PaymentStatus.ACTION_REQUIRED, D, 1)
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.PAST_DUE and after.BillingPeriod == D.isoformat()
    assert after.PaymentDetails.AwaitingCharge == retried.charge_id
    assert retried.reason == f"authentication_required; waits for the customer, reminded on {retried.next_payment}"
    assert [message.subject for message in mail.outbox] == ["Please confirm your payment: News-Daily"]
