"""Recording a charge the gateway says succeeded (billing/operations/payments.py
``record_paid_charge`` and ``_paid``): a charge found after the customer cancelled is mailed
from the receipt just written, without reading it back; a payment run's receipt takes its
number from the run's own series; a charge found naming its coupon but no discount is a
receipt of no discount."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest
from django.core import mail

from billing import access
from billing.models import SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from tests.billing.test_payment_paths import charge_for
from tests.builders import fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)  # pays 15 March to 14 April
LAST_DAY = date(2027, 4, 14)


def test_a_charge_recorded_after_the_cancel_mails_its_receipt_without_reading_it_back(moto_table,
                                                                                     ddb_requests) -> None:
    """A charge found after the customer cancelled: the receipt written now is the one
    mailed, as written (no GetItem of it): one read before the receipt's transaction, the
    refused advance, the subscription read back and the extension of its service."""
    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=LAST_DAY)
    access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
    cancelled = fresh(sub)
    ddb_requests.reset()
    out = payments.record_paid_charge(cancelled, result, run_date=D)
    assert (out.status, out.reason) == (PaymentStatus.PAID, "paid after cancel: service runs to 2027-04-14")
    assert ddb_requests.by_name() == Counter({"GetItem": 2, "TransactWriteItems": 2, "UpdateItem": 1})
    [receipt] = receipts_of(sub)
    [message] = mail.outbox
    assert message.subject == f"Invoice {receipt.Number}: {sub.ProductName or sub.SKU}, 15 March 2027"
    after = fresh(sub)
    assert (after.Status, after.PaidThroughDate) == (SubscriptionStatus.CANCELLED, "2027-04-14")


def a_series_not_the_process_s() -> access.ReceiptNumbers:
    """A run's receipt numbers whose series is not the one a receipt written on its own
    takes (``RECEIPT_NUMBERS``): a number of the wrong series cannot pass for the run's."""
    from billing.access.receipt_numbers import RECEIPT_NUMBERS

    numbers = access.ReceiptNumbers()
    while numbers.draw(D.year).series == RECEIPT_NUMBERS.draw(D.year).series:
        numbers = access.ReceiptNumbers()
    return numbers


def test_a_run_s_payment_is_numbered_in_the_run_s_own_series(moto_table) -> None:
    """A payment run hands its receipt numbers to each payment: the receipt takes the first
    number of the run's series (``R-<year>-S<series>-000001``), never one of the process's
    series, and the run's series knows it has given it (the next follows without a gap)."""
    from billing.access.receipt_numbers import format_receipt_number

    numbers = a_series_not_the_process_s()
    [sub] = seed_due(1, due=D)
    assert payments.take_payment(sub, run_date=D, numbers=numbers).status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    year = int(receipt.Number.split("-")[1])
    drawn = numbers.draw(year)
    assert drawn.known and drawn.seen == 1
    assert receipt.Number == format_receipt_number(year, 1, drawn.series)
    [message] = mail.outbox
    assert message.subject.startswith(f"Invoice {receipt.Number}:")


def test_a_charge_found_naming_its_coupon_but_no_discount_is_a_receipt_of_no_discount(moto_table) -> None:
    """A charge the reconciliation finds whose metadata names a coupon but no discount (made
    by another path): its receipt, as the API shows it, took nothing off: its price is the
    amount charged."""
    from billing.rules.api_objects import receipt_object

    [sub] = seed_due(1, due=D)
    result = charge_for(sub, start=D, end=LAST_DAY, coupon="WELCOME")
    assert "discount" not in result.metadata
    assert payments.record_paid_charge(fresh(sub), result, run_date=D).status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    shown = receipt_object(receipt)
    assert (shown["coupon"], shown["discount"], shown["price"], shown["amount"]) == ("WELCOME", 0, 999, 999)
