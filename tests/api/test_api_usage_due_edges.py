"""The edges of what a cancellation bills for its open period's usage
(``final_usage.usage_due``, which the cancel page shows and ``bill_final_usage`` charges):
a period that never began bills nothing, even as a page's zero; a subscription written
before ``LastPaymentDate`` was kept bills from its cadence's date; one minor unit of usage
is billed; the tax is the buyer's, at the rate in force on the last day served."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing.operations.final_usage import usage_due
from tests.api.conftest import ApiClient
from tests.api.test_api_several_metered_prices import send_events, two_meters
from tests.builders import fresh, prices_exclude_vat

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
