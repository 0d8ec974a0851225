"""A change of seats' invoice line names the seats it pays for, as Stripe's proration line
names the quantity it prorates: the charge pays for the seats added alone, for the days
left, so its line reads "Team: $10.00 a seat, 5 → 7 seats" (billing/rules/seat_lines.py
``SeatsFrom``), in the reader's language, on the receipt page, the invoice e-mail and the
API's receipt (``seats.quantity_before``); a receipt recorded later from the charge's
metadata (the reconciliation's) names them too."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import mail
from django.utils.translation import override

from billing.actions import seats
from billing.rules.api_objects import receipt_object
from billing.rules.invoice import invoice_of
from tests.billing.test_seats import MID, at, crash_after_the_charge, team
from tests.builders import fresh, receipts_of

pytestmark = pytest.mark.django_db


def _seats_receipt(sub, day: date):
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == day.isoformat()]
    return receipt


def test_more_seats_name_the_seats_before_and_after_on_every_copy_of_the_invoice(moto_table) -> None:
    sub = team(5)
    mail.outbox = []
    with at(MID):
        seats.change_quantity(fresh(sub), 7, "customer", today=MID)
    receipt = _seats_receipt(sub, MID)
    [line] = receipt.TaxLines
    assert (line.Quantity, line.SeatPrice, line.SeatsFrom) == (7, 1000, 5)  # stored, worded when read
    [shown] = invoice_of(receipt).lines
    assert shown.description == "Team: $10.00 a seat, 5 → 7 seats"
    with override("it"):
        assert invoice_of(receipt).lines[0].description == "Team: 10,00\xa0USD a posto, 5 → 7 posti"
    [api_line] = receipt_object(receipt)["tax"]["lines"]
    assert api_line["seats"] == {"quantity": 7, "unit_amount": 1000, "quantity_before": 5}
    assert api_line["description"] == "Team: $10.00 a seat, 5 → 7 seats"
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    assert "Team: $10.00 a seat, 5 → 7 seats" in invoice.body


def test_the_seats_added_on_the_first_day_read_from_one_seat(moto_table) -> None:
    sub = team(5)  # one seat subscribed, four added the same day
    [line] = _seats_receipt(sub, date(2027, 3, 10)).TaxLines
    assert invoice_of(_seats_receipt(sub, date(2027, 3, 10))).lines[0].description == \
        "Team: $10.00 a seat, 1 → 5 seats"
    assert line.SeatsFrom == 1


def test_a_receipt_recorded_from_the_charge_names_the_seats_too(moto_table, monkeypatch) -> None:
    sub = team(2)
    crash_after_the_charge(sub, 3, monkeypatch)
    receipt = _seats_receipt(sub, MID)  # recorded, then refunded: the change never happened
    assert invoice_of(receipt).lines[0].description == "Team: $10.00 a seat, 2 → 3 seats"
