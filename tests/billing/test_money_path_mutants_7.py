"""A charge waiting for the cardholder's bank, confirmed at the last moment: the last retry
day cancels it, and the bank's "yes" came just before the cancel (``_action_required``,
also when the run asked about a charge it was already waiting for, ``_awaited``). The
payment is then recorded by the run as its own: a receipt numbered in the run's own series,
invoiced by the seller as the run read it. And the receipt e-mail of a charge found naming
its coupon but no discount (``_discount_context``): a discount of nothing, its price the
amount charged."""

from __future__ import annotations

from datetime import date

import pytest

from billing import access, batches
from billing.models import SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.billing.test_action_required import (
    following,
    paid_from_the_same_series,
    run_parts_then_seller_renamed,
)
from tests.builders import DECLINED_NUMBER, card, fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

PERIOD = date(2027, 1, 15)
LAST_RETRY = date(2027, 1, 20)  # the retry days 1, 3, 5 after the 15th: the 16th, 18th, 20th


@pytest.fixture(autouse=True)
def retry_days(settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]


class ConfirmedJustBeforeTheCancel:
    """The simulated gateway, but the cardholder confirms the waiting charge with their
    bank just before the run's cancel reaches it (the cancel then finds it paid)."""

    def __init__(self) -> None:
        self.real = get_gateway()

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def cancel_charge(self, charge_id: str):
        self.real.authenticate(charge_id, approve=True)
        return self.real.cancel_charge(charge_id)


def run_parts_in_a_series_of_their_own() -> tuple[access.ReceiptNumbers, access.InvoiceSeller]:
    """A run's numbers and seller (``run_parts_then_seller_renamed``), its numbers in a series
    that is not the one a receipt written on its own takes: so a receipt numbered outside
    the run's series cannot follow the run's last number by chance."""
    from billing.access.receipt_numbers import RECEIPT_NUMBERS

    numbers, seller = run_parts_then_seller_renamed()
    while numbers.draw(LAST_RETRY.year).series == RECEIPT_NUMBERS.draw(LAST_RETRY.year).series:
        numbers = access.ReceiptNumbers()
    return numbers, seller


def assert_recorded_by_the_run(sub, outcome, before: str) -> None:
    last = get_gateway().charges_made(sub_id=sub.sub_id)[-1]
    assert (outcome.status, outcome.charge_id, last["status"]) == (PaymentStatus.PAID, last["charge_id"], "succeeded")
    [receipt] = receipts_of(sub)
    # the run's own series, the number after the one it gave last; its seller as it read it
    assert (receipt.ChargeId, receipt.Number, receipt.Seller.Name) == (last["charge_id"], following(before), "rpay Ltd")
    assert fresh(sub).Status == SubscriptionStatus.ACTIVE


def test_a_charge_confirmed_as_the_last_retry_cancels_it_is_the_runs_receipt(moto_table) -> None:
    """A last retry's new charge, confirmed by the bank as the run cancels it: paid, and
    recorded with the run's receipt numbers and seller."""
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)
    for day in (PERIOD, date(2027, 1, 16), date(2027, 1, 18)):
        assert batches.run_payments(run_date=day, workers=1).counts["processed"] == 1
    access.replace_card(fresh(sub), card(AUTHENTICATING_TEST_CARD))  # its last retry: the bank asks
    numbers, seller = run_parts_in_a_series_of_their_own()
    before = paid_from_the_same_series(numbers, LAST_RETRY)
    outcome = payments.take_payment(fresh(sub), run_date=LAST_RETRY, numbers=numbers, seller=seller,
                                   gateway=ConfirmedJustBeforeTheCancel())
    assert_recorded_by_the_run(sub, outcome, before)


def test_a_charge_waited_for_and_confirmed_as_the_last_retry_cancels_it_is_the_runs_receipt(moto_table) -> None:
    """A charge the run has waited for since its first day, confirmed by the bank as the
    last retry cancels it: paid, and recorded with the run's receipt numbers and seller."""
    [sub] = seed_due(1, due=PERIOD, number=AUTHENTICATING_TEST_CARD)
    for day in (PERIOD, date(2027, 1, 16), date(2027, 1, 18)):  # asked, then reminded twice
        assert batches.run_payments(run_date=day, workers=1).counts["processed"] == 1
    [waiting] = get_gateway().charges_made(sub_id=sub.sub_id)
    numbers, seller = run_parts_in_a_series_of_their_own()
    before = paid_from_the_same_series(numbers, LAST_RETRY)
    outcome = payments.take_payment(fresh(sub), run_date=LAST_RETRY, numbers=numbers, seller=seller,
                                   gateway=ConfirmedJustBeforeTheCancel())
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1  # the one it waited for, never made again
    assert outcome.charge_id == waiting["charge_id"]
    assert_recorded_by_the_run(sub, outcome, before)


# --- the receipt e-mail of a charge found with its coupon ---------------------------------


def test_a_charge_found_naming_its_coupon_but_no_discount_is_mailed_with_a_discount_of_nothing(moto_table) -> None:
    """A charge the reconciliation finds whose metadata names a coupon but no discount (made
    by another path): its e-mail shows the coupon taking nothing off, the price being the
    amount charged."""
    from django.core import mail

    from tests.billing.test_payment_paths import charge_for

    [sub] = seed_due(1, due=PERIOD)
    result = charge_for(sub, start=PERIOD, end=date(2027, 2, 14), coupon="WELCOME")
    assert "discount" not in result.metadata
    assert payments.record_paid_charge(fresh(sub), result, run_date=PERIOD).status == PaymentStatus.PAID
    [message] = mail.outbox
    said = [" ".join(line.split()) for line in message.body.splitlines() if line.strip()]
    assert [line for line in said if line.startswith(("Price:", "Discount", "Amount:"))] == [
        "Price: $9.99", "Discount (WELCOME): -$0.00", "Amount: $9.99"]
