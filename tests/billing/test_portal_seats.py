"""The seats pages: the customer's two steps (the number, then the amount, then changed),
the amount shown is the amount charged (and credited), field errors, a stale page charging
nothing, another customer's 404; the subscription page's "$10.00 a seat × 5"; the staff
page for the finance role only."""

from __future__ import annotations

from datetime import date

import time_machine
from django.urls import reverse

from billing import access
from billing.actions import seats
from billing.models import AuditAction
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from core.money import format_with_code
from core.payments.gateway import get_gateway
from tests.builders import PASSWORD, card, fresh, make_subscription, make_user, receipts_of

MADE = date(2027, 3, 10)
DAY = date(2027, 3, 25)


def paid_team(customer, quantity: int = 5):
    """Made on 10 March (payment day 10), paid through 9 April: ``quantity`` seats at $10.00."""
    with time_machine.travel("2027-03-10 12:00Z", tick=False):
        sub = make_subscription(access.get_account(customer.account_id), payment_day=10, today=MADE, card=card(),
                                amount=1000)
        assert payments.take_first_payment(sub, today=MADE).status == PaymentStatus.PAID
        if quantity > 1:
            seats.change_quantity(fresh(sub), quantity, "customer", today=MADE)
    return fresh(sub)


def log_in(customer) -> None:
    assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302


def seat_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "seats"]


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def test_the_page_shows_the_amount_the_change_then_charges(customer) -> None:
    sub = paid_team(customer)
    url = f"/subscriptions/{sub.sub_id}/seats/"
    with at(DAY):
        log_in(customer)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert "$10.00 a seat × 5" in page and 'data-testid="change-seats"' in page
        form = customer.client.get(url)
        assert form.status_code == 200 and 'name="quantity"' in form.content.decode()
        before = len(seat_charges(sub))
        quote = customer.client.post(url, {"quantity": 7, "version": sub.Version})
        assert len(seat_charges(sub)) == before  # nothing charged by the quote
        shown = quote.context["due_now"]
        assert shown == seats.charged_now(fresh(sub), seats.quote(fresh(sub), 7, today=DAY)) == 1032
        assert "$10.32" in quote.content.decode()
        assert 'Your next payment, on 10 April 2027, is $70.00: $10.00 a seat × 7.' in quote.content.decode()
        done = customer.client.post(url, {"quantity": 7, "version": sub.Version, "amount": shown,
                                          "step": "confirm"}, follow=True)
        assert "You now have 7 seats." in done.content.decode()
        assert "$10.00 a seat × 7" in done.content.decode()
    [charge] = seat_charges(sub)[before:]
    assert charge["amount"] == shown  # what the page showed is what was charged
    assert fresh(sub).Quantity == 7
    # the same confirm sent again (a double click): stale, nothing more charged
    with at(DAY):
        again = customer.client.post(url, {"quantity": 7, "version": sub.Version, "amount": shown, "step": "confirm"})
    assert again.status_code == 200 and len(seat_charges(sub)) == before + 1
    assert "already" in again.content.decode()


def test_fewer_seats_show_the_credit_they_give(customer) -> None:
    sub = paid_team(customer)
    url = f"/subscriptions/{sub.sub_id}/seats/"
    with at(DAY):
        log_in(customer)
        quote = customer.client.post(url, {"quantity": 2, "version": sub.Version})
        credit = quote.context["quote"].credit_now
        assert credit == 1548 and "$15.48" in quote.content.decode()
        customer.client.post(url, {"quantity": 2, "version": sub.Version, "amount": credit, "step": "confirm"})
    assert sum(int(r.RefundedAmount or 0) for r in receipts_of(sub)) == credit  # credited as shown
    assert fresh(sub).PaymentAmount == 2000


def test_field_errors(customer) -> None:
    sub = paid_team(customer, 3)
    url = f"/subscriptions/{sub.sub_id}/seats/"
    with at(DAY):
        log_in(customer)
        for value, words in ((0, "Choose between 1 and 10000 seats."), (10_001, "Choose between 1 and 10000 seats."),
                             ("two", "Enter a whole number."), (3, "You have 3 seats already.")):
            page = customer.client.post(url, {"quantity": value, "version": sub.Version})
            assert page.status_code == 200 and words in page.content.decode(), value
            assert "form" in page.context and page.context["form"].errors
    assert len(seat_charges(sub)) == 1  # only the seats made by the test's setup


def test_a_stale_page_charges_nothing(customer) -> None:
    sub = paid_team(customer, 2)
    url = f"/subscriptions/{sub.sub_id}/seats/"
    with at(DAY):
        log_in(customer)
        quote = customer.client.post(url, {"quantity": 4, "version": sub.Version})
        shown = quote.context["due_now"]
        seats.change_quantity(fresh(sub), 3, "customer", today=DAY)  # another tab, meanwhile
        before = len(seat_charges(sub))
        stale = customer.client.post(url, {"quantity": 4, "version": sub.Version, "amount": shown,
                                           "step": "confirm"})
    assert stale.status_code == 409
    assert stale.context["quote"].old_quantity == 3  # the amounts drawn again, from 3 seats
    assert len(seat_charges(sub)) == before and fresh(sub).Quantity == 3


def test_another_customers_subscription_is_not_found(customer, other_customer) -> None:
    sub = paid_team(customer, 1)
    other_customer.client.post("/login/", {"username": other_customer.email, "password": PASSWORD})
    assert other_customer.client.get(f"/subscriptions/{sub.sub_id}/seats/").status_code == 404


def test_staff_with_the_finance_role_change_seats_others_may_not(customer, client) -> None:
    sub = paid_team(customer, 2)
    url = reverse("admin:staff_seats", args=[customer.account_id, sub.sub_id])
    with at(DAY):
        client.force_login(make_user("support@example.com", staff=True, roles=["support"]))
        assert client.get(url).status_code == 403
        client.force_login(make_user("money@example.com", staff=True, money=True))
        assert client.get(url).status_code == 200
        # the same field rules as the customer's page, in staff's voice
        assert "The subscription has 2 seats already." in client.post(url, {"quantity": 2}).content.decode()
        asked = client.post(url, {"quantity": 3})
        question = asked.content.decode()
        due = seats.charged_now(fresh(sub), seats.quote(fresh(sub), 3, today=DAY))
        assert due == 516 and format_with_code(due, "USD") in question
        done = client.post(url, {"quantity": 3, "step": "confirm", "version": fresh(sub).Version, "amount": due})
        assert done.status_code == 302
    assert fresh(sub).Quantity == 3 and seat_charges(sub)[-1]["amount"] == due
    assert AuditAction.STAFF_QUANTITY in [e.Action for e in access.get_events_by_account(customer.account_id)]


def test_staff_fewer_seats_say_the_refund_and_make_it(customer, client) -> None:
    sub = paid_team(customer, 5)
    url = reverse("admin:staff_seats", args=[customer.account_id, sub.sub_id])
    with at(DAY):
        client.force_login(make_user("money@example.com", staff=True, money=True))
        question = client.post(url, {"quantity": 2}).content.decode()
        assert f"{format_with_code(1548, 'USD')} is refunded to the customer" in question
        done = client.post(url, {"quantity": 2, "step": "confirm", "version": fresh(sub).Version, "amount": 1548})
        assert done.status_code == 302
        # the same confirm again: stale, nothing more refunded
        client.post(url, {"quantity": 3, "step": "confirm", "version": sub.Version, "amount": 1548})
    assert fresh(sub).Quantity == 2
    assert sum(int(r.RefundedAmount or 0) for r in receipts_of(sub)) == 1548
