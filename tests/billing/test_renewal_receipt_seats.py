"""A period's charge of several seats names them on its invoice line, as a switch's does
(billing/rules/seat_lines.py): the first payment and every renewal, taken by the payment
run from GSI-2 (which projects ``Quantity`` and ``UnitAmount``), and a renewal recorded
later from its charge's metadata. One seat reads as before. On moto; time by time-machine."""

from __future__ import annotations

from datetime import date

import pytest

from billing import batches
from billing.operations import payments
from billing.rules.api_objects import receipt_object
from billing.rules.invoice import invoice_of
from billing.rules.seat_lines import charge_seats, seats_metadata
from core.payments.gateway import get_gateway
from tests.billing.test_switch_receipt_seats import seated
from tests.billing.test_switch_seats import MADE, at, catalog
from tests.builders import fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

RENEWAL = date(2027, 4, 10)
LINE = "Team: $10.00 a seat × 5"


def _period_receipt(sub, start: date):
    [receipt] = [r for r in receipts_of(sub) if r.PeriodStart == start.isoformat() and not r.Kind]
    return receipt


def test_the_first_payment_and_a_renewal_by_the_run_name_their_seats(moto_table) -> None:
    sub = seated(make_customer("five-renewed@example.com"), catalog()["monthly"], 5)
    first = _period_receipt(sub, MADE)
    assert invoice_of(first).lines[0].description == LINE
    with at(RENEWAL):
        summary = batches.run_payments(run_date=RENEWAL, workers=1, catch_up_days=0)
    assert summary.counts["paid"] == 1, summary.counts
    renewal = _period_receipt(sub, RENEWAL)
    [line] = renewal.TaxLines
    assert (line.Quantity, line.SeatPrice, int(renewal.ProcessedAmount)) == (5, 1000, 5000)
    assert invoice_of(renewal).lines[0].description == LINE
    [api_line] = receipt_object(renewal)["tax"]["lines"]
    assert api_line["seats"] == {"quantity": 5, "unit_amount": 1000, "quantity_before": None}
    [charge] = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"]["period_start"] ==
                RENEWAL.isoformat()]
    assert (charge["metadata"]["quantity"], charge["metadata"]["unit_amount"]) == ("5", "1000")


def test_one_seat_names_none_and_a_charge_recorded_later_names_its_seats(moto_table) -> None:
    sub = seated(make_customer("one-renewed@example.com"), catalog()["monthly"], 1)
    assert seats_metadata(fresh(sub)) == {}
    with at(RENEWAL):
        payments.take_payment(fresh(sub), run_date=RENEWAL)
    [line] = _period_receipt(sub, RENEWAL).TaxLines
    assert (line.Quantity, line.SeatPrice) == (None, None)
    assert invoice_of(_period_receipt(sub, RENEWAL)).lines[0].description == "Team"
    # a renewal's charge recorded from its metadata (a webhook, the reconciliation); a price
    # by tiers of seats has no one price a seat
    assert charge_seats({"quantity": "5", "unit_amount": "1000"}).quantity == 5
    assert charge_seats({"quantity": "12", "unit_amount": ""}).unit_amount is None
