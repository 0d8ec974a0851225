"""The edges of what a cancellation bills for its open period's usage
(``final_usage.usage_due``, which the cancel page shows and ``bill_final_usage`` charges):
a period that never began bills nothing, even as a page's zero; a subscription written
before ``LastPaymentDate`` was kept bills from its cadence's date; one minor unit of usage
is billed; usage within free units is recorded on a receipt of 0, never left unbilled;
the tax is the buyer's, at the rate in force on the last day served."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.core import mail

from billing.operations.final_usage import bill_final_usage, usage_due
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.api.test_api_several_metered_prices import send_events, two_meters
from tests.builders import fresh, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db

LAST_DAY = date(2027, 3, 14)  # the open period: 15 February (LastPaymentDate) to 14 March


def test_a_period_that_never_began_bills_nothing_not_even_a_zero(moto_table) -> None:
    # cancelled to end the day before its open period's first day (a free trial's last day)
    sub, _, _ = two_meters()
    assert usage_due(fresh(sub), date(2027, 2, 14), nothing_too=True) is None


def test_without_its_last_payment_date_the_period_starts_on_the_cadence_s_date(moto_table) -> None:
    sub = fresh(two_meters()[0])
    sub.LastPaymentDate = None  # as written before the attribute was kept
    due = usage_due(sub, LAST_DAY, nothing_too=True)
    assert due is not None and due.start == date(2027, 2, 15)


def test_one_minor_unit_of_usage_is_billed(write_api: ApiClient) -> None:
    sub, _, _ = two_meters()
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        # 1,005 calls: the first 1,000 free, 5 at 0.2 cents
        send_events(write_api, sub, [("api_calls", date(2027, 2, 20), 1005)])
        due = usage_due(fresh(sub), LAST_DAY)
    assert due is not None and due.line.gross == 1


def test_the_tax_is_the_buyer_s_at_the_rate_of_the_last_day_served(moto_table) -> None:
    # an Italian seller, prices before VAT; a Finnish consumer (OSS: Finland's VAT), whose
    # standard rate was 24% until 31 August 2024 and 25.5% since
    prices_exclude_vat()
    sub = fresh(two_meters()[0])
    sub.BillingCountry, sub.LastPaymentDate = "FI", "2024-08-01"
    due = usage_due(sub, date(2024, 8, 31), nothing_too=True)
    assert due is not None and (due.line.rate.country, due.line.rate.percent) == ("FI", Decimal(24))


def test_usage_within_free_units_is_recorded_on_a_receipt_of_nothing_charged(write_api: ApiClient) -> None:
    # 600 calls, all within the first 1,000 free, and no storage: a cancel now closes the
    # period, so its events must be on a receipt (each closed event billed once), though
    # nothing is charged: a receipt of 0, as a payment a coupon took whole.
    sub = fresh(two_meters()[0])
    sub.OtherMeteredPriceIds = None  # the calls alone
    mail.outbox = []
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        send_events(write_api, sub, [("api_calls", date(2027, 2, 20), 600)])
        assert usage_due(sub, LAST_DAY) is None  # the cancel page: nothing to charge
        done = bill_final_usage(sub, last_day=LAST_DAY, actor="test")
        again = bill_final_usage(sub, last_day=LAST_DAY, actor="test")  # a re-run: the same receipt
    assert done.receipt is not None and again.receipt is not None and again.receipt.SK == done.receipt.SK
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.ChargeId, receipt.Kind) == (0, None, "usage")
    assert (receipt.UsageMeter, receipt.UsageQuantity, receipt.UsageAmount) == ("api_calls", 600, 0)
    [sent] = mail.outbox  # told once
    assert sent.to == [sub.Email]


@pytest.mark.parametrize("values", [[], [0, 0]], ids=["no-event", "events-of-nothing"])
def test_events_that_add_up_to_nothing_are_billed_on_a_receipt_of_0_and_no_event_is_nothing(
        values: list[int], write_api: ApiClient) -> None:
    # A sum of events of 0 is used at 0 but counted: its period closes with the cancel, so
    # each of its events must be on a receipt (each closed event billed once), as a renewal
    # would have carried them; a period without any event bills and records nothing.
    sub = fresh(two_meters()[0])
    sub.OtherMeteredPriceIds = None  # the calls alone (a sum)
    mail.outbox = []
    with time_machine.travel(datetime(2027, 3, 14, 20, tzinfo=UTC), tick=False):
        send_events(write_api, sub, [("api_calls", date(2027, 2, 20), value) for value in values])
        done = bill_final_usage(sub, last_day=LAST_DAY, actor="test")
        again = bill_final_usage(sub, last_day=LAST_DAY, actor="test")  # a re-run: no second receipt
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []
    if not values:
        assert (done.receipt, again.receipt, receipts_of(sub), mail.outbox) == (None, None, [], [])
        return
    [receipt] = receipts_of(sub)
    assert done.receipt is not None and again.receipt is not None and again.receipt.SK == receipt.SK
    assert (receipt.ProcessedAmount, receipt.ChargeId, receipt.Kind) == (0, None, "usage")
    assert (receipt.UsageStart, receipt.UsageEnd) == ("2027-02-15", "2027-03-15")
    assert (receipt.UsageMeter, receipt.UsageQuantity, receipt.UsageAmount) == ("api_calls", 0, 0)
    assert len(mail.outbox) == 1  # told once
