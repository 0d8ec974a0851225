"""A switch of several seats names them on its invoice and in its e-mails, as Stripe's
proration line shows the item's quantity (docs/MONEY.md "Switching price or cadence",
several seats): the receipt's line stores the seats and one seat's price
(billing/rules/seat_lines.py), and the portal's
page, the PDF, the API's receipt and the invoice e-mail word it ("Team Plus: $20.00 a seat
× 5"); the switch's e-mail says "Your subscription keeps its 5 seats." A switch of one
seat reads as before. On moto; time by time-machine."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client
from django.utils.translation import override

from billing import access
from billing.actions import api_keys, switch
from billing.actions import subscriptions as subscribing
from billing.models import Subscription
from billing.rules.api_objects import receipt_object
from billing.rules.invoice import invoice_of
from billing.rules.price_choice import choose_price
from tests.billing.test_portal_receipt_pages import pdf_text
from tests.billing.test_switch_seats import MADE, MID, at, catalog
from tests.builders import PASSWORD, Customer, card, fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

LINE = "Team Plus: $20.00 a seat × 5"


def seated(customer: Customer, price_id: str, seats: int) -> Subscription:
    product = access.get_product("TEAM")
    with at(MADE):
        started = subscribing.subscribe_to_price(
            access.get_account(customer.account_id), product,
            choose_price(access.get_price(price_id), product, seats), payment_day=10, card=card(),
            today=MADE, actor="customer")
    return fresh(started.sub)


def switched(customer: Customer, seats: int) -> tuple[Subscription, str]:
    """``customer``'s Team subscription of ``seats`` switched on MID to Team Plus ($20.00 a
    seat a month), mail.outbox holding the switch's e-mails only; returns it and the price."""
    prices = catalog()
    sub = seated(customer, prices["monthly"], seats)
    mail.outbox = []
    with at(MID):
        switch.switch(fresh(sub), prices["plus"], today=MID, actor="customer")
    return sub, prices["plus"]


def switch_receipt(sub: Subscription):
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    return receipt


def api_receipt(number: str, account_id: str) -> dict:
    _, secret = api_keys.create_key("crm", "read", actor="test")
    response = Client().get(f"/api/v1/customers/{account_id}/receipts/{number}",
                            headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_five_seat_switch_names_its_seats_on_the_invoice_and_in_its_emails(moto_table) -> None:
    customer = make_customer("five-lines@example.com")
    sub, _ = switched(customer, 5)
    receipt = switch_receipt(sub)
    [line] = receipt.TaxLines
    assert (line.Description, line.Quantity, line.SeatPrice) == ("Team Plus", 5, 2000)  # stored, worded when read
    [shown] = invoice_of(receipt).lines
    assert shown.description == LINE
    with override("it"):
        assert invoice_of(receipt).lines[0].description == "Team Plus: 20,00\xa0USD a posto × 5"
    # the API: the line's words in English, and its seats as figures (Stripe's quantity)
    [api_line] = api_receipt(receipt.Number, sub.account_id)["tax"]["lines"]
    assert api_line["description"] == LINE and api_line["seats"] == {"quantity": 5, "unit_amount": 2000, "quantity_before": None}
    assert receipt_object(receipt)["tax"]["lines"] == [api_line]
    # the portal's receipt page and its PDF
    with at(MID):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        page = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
        pdf = customer.client.get(f"/receipts/{receipt.Number}/pdf/")
    assert LINE in page
    assert "$20.00 a seat × 5" in pdf_text(pdf.content)
    # the e-mails: the invoice's line, and the switch's own "5 seats"
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    [told] = [m for m in mail.outbox if not m.subject.startswith("Invoice ")]
    assert LINE in invoice.body and LINE in invoice.alternatives[0][0]
    assert "Your subscription keeps its 5 seats." in told.body
    assert "Your subscription keeps its 5 seats." in told.alternatives[0][0]


def test_the_switch_emails_name_the_seats_in_the_customers_language(moto_table) -> None:
    customer = make_customer("five-ko@example.com")
    prices = catalog()
    sub = seated(customer, prices["monthly"], 5)
    sub.Language = "ko"  # the e-mails' language: the subscription's copy of the customer's
    mail.outbox = []
    with at(MID):
        switch.switch(sub, prices["plus"], today=MID, actor="customer")
    [told] = [m for m in mail.outbox if "구독의 좌석 5개는 그대로 유지됩니다." in m.body]
    assert told


def test_a_one_seat_switch_reads_as_before(moto_table) -> None:
    customer = make_customer("one-line@example.com")
    sub, _ = switched(customer, 1)
    receipt = switch_receipt(sub)
    [line] = receipt.TaxLines
    assert (line.Quantity, line.SeatPrice) == (None, None)
    assert invoice_of(receipt).lines[0].description == "Team Plus"
    [api_line] = receipt_object(receipt)["tax"]["lines"]
    assert api_line["description"] == "Team Plus" and api_line["seats"] is None
    assert not any("seat" in m.body for m in mail.outbox)


def test_the_seats_words_of_a_line_by_tiers_and_of_a_charge_recorded_later() -> None:
    """A price by tiers of seats has no one price a seat: its line says so; a switch's
    charge recorded later (``refund_unapplied_switch``) takes its seats from its metadata."""
    from billing.models import TaxLineMap
    from billing.rules.invoice import line_of
    from billing.rules.seat_lines import LineSeats, charge_seats, mark_seats

    line = TaxLineMap(Description="Team Plus", Net=7800, TaxRate="0", Tax=0, Gross=7800)
    mark_seats(line, LineSeats(7, None))
    assert line_of(line, "USD").description == "Team Plus: 7 seats, priced by tiers"
    assert charge_seats({"kind": "switch", "quantity": "5", "unit_amount": "2000"}) == LineSeats(5, 2000)
    assert charge_seats({"kind": "switch", "quantity": "7", "unit_amount": ""}) == LineSeats(7, None)
    # a change of seats' charge pays for the seats added: named with the seats before it,
    # never as if for them all
    assert charge_seats({"kind": "seats", "quantity": "5", "old_quantity": "2", "unit_amount": "2000"}) \
        == LineSeats(5, 2000, added_from=2)
    assert charge_seats({"kind": "seats", "quantity": "5", "unit_amount": "2000"}) is None
    assert charge_seats({"kind": "switch"}) is None
