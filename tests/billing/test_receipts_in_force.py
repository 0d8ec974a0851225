"""A yearly subscriber still sees the receipt of the period in force after six months
(docs/MONEY.md "Cadences", "Receipts of the periods in force"): the portal's receipts
page, its CSV, the subscription page, the staff's account page and the API list it; a
monthly customer's lists read nothing more than before."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from billing import access
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from tests.builders import PASSWORD, card, fresh, make_customer, make_user

PAID_ON = date(2027, 3, 10)
LATER = date(2027, 11, 20)  # eight months on: outside the six months, inside the year


def on(day: date) -> time_machine.travel:
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def yearly_of(customer, interval: str = "year"):
    with on(PAID_ON):
        sub = access.create_subscription(access.get_account(customer.account_id), sku="NEWS-DAILY", payment_day=10,
                                         amount=12000, currency="USD", card=card(), today=PAID_ON,
                                         reminder_days_before=7, product_name="Daily News", interval=interval)
        assert payments.take_first_payment(sub, today=PAID_ON).status == PaymentStatus.PAID
    return fresh(sub)


@pytest.fixture
def yearly_customer(db, moto_table, products):
    with on(PAID_ON):
        customer = make_customer("yan@example.com")
    sub = yearly_of(customer)
    [receipt] = access.get_receipts_by_account(customer.account_id, PAID_ON, PAID_ON)
    return customer, sub, receipt


def logged_in(customer) -> Client:
    client = Client()
    assert client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
    return client


def test_the_portal_lists_the_yearly_receipt_while_its_year_runs(yearly_customer) -> None:
    customer, sub, receipt = yearly_customer
    with on(LATER):
        client = logged_in(customer)
        page = client.get(reverse("receipts"))
        csv = client.get(reverse("receipts_csv")).content.decode()
        detail = client.get(reverse("subscription", args=[sub.sub_id]))
    assert receipt.Number in page.content.decode()
    assert 'data-testid="in-force-note"' in page.content.decode()
    assert receipt.Number in csv
    assert [r.SK for r in detail.context["sub_receipts"]] == [receipt.SK]


def test_the_staff_and_the_api_list_it_too(yearly_customer, settings) -> None:
    customer, _sub, receipt = yearly_customer
    clerk = make_user("clerk@rpay.localhost", staff=True)
    with on(LATER):
        staff = Client()
        staff.force_login(clerk)
        page = staff.get(reverse("admin:staff_account", args=[customer.account_id]))
        listed = access.receipts_page(customer.account_id, limit=10).items
    assert [r.SK for r in page.context["receipts"]] == [receipt.SK]
    assert [r.SK for r in listed] == [receipt.SK]


def test_after_its_year_it_leaves_the_list(yearly_customer) -> None:
    customer, sub, _receipt = yearly_customer
    subs = [fresh(sub)]
    # its period ends 9 March 2028; the next year's receipt would be the one in force
    assert access.receipts_in_force(subs, date(2027, 9, 20), date(2028, 3, 9))
    assert access.receipts_in_force(subs, date(2027, 9, 20), date(2028, 3, 10)) == []


def test_a_monthly_customers_list_reads_no_receipt_by_key(customer, ddb_requests) -> None:
    with on(PAID_ON):
        sub = access.create_subscription(access.get_account(customer.account_id), sku="NEWS-DAILY", payment_day=10,
                                         amount=999, currency="USD", card=card(), today=PAID_ON,
                                         reminder_days_before=7, product_name="Daily News")
        payments.take_first_payment(sub, today=PAID_ON)
    ddb_requests.reset()
    assert access.receipts_in_force([fresh(sub)], date(2027, 1, 1), date(2027, 3, 20)) == []
    assert "BatchGetItem" not in ddb_requests.by_name()
