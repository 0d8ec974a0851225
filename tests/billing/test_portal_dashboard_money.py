"""The dashboard's money: each subscription's next payment with the amount it
will charge (prorations included, as the payment run charges them) and its paid-through
date; the upcoming list with the same amounts; still one Query for the
dashboard (the subscription page adds the payment history's)."""

from __future__ import annotations

import re
from datetime import date

import pytest

from billing import access
from billing.views.dashboard_pages import upcoming_payments
from tests.builders import subscribe

pytestmark = pytest.mark.django_db


def cards_of(html: str) -> list[str]:
    return re.findall(r'data-testid="subscription">(.*?)card-footer', html, flags=re.S)


def test_next_payment_amounts_include_prorations(customer, ddb_requests) -> None:
    # Created on 10 January, paying on the 15th: the first period (10-14 January) is owed,
    # 5 days of a 31-day period: 999 * 5 / 31 = 161.1 -> $1.61.
    first = subscribe(customer, "NEWS-DAILY", day=15, on=date(2027, 1, 10))
    # Another, paid up to 14 February, whose day then moves to the 1st: the next payment
    # (15 February) pays to 31 March, 14/28 of February plus March: 499.5 + 999 -> $14.99.
    moved = subscribe(customer, "GYM", day=15, amount=999, currency="USD", on=date(2027, 1, 10))
    access.set_schedule(moved, next_payment=date(2027, 2, 15), last_payment=date(2027, 1, 15),
                        next_reminder=date(2027, 2, 8), last_reminder=date(2027, 1, 8))
    access.change_payment_day(moved, 1)
    ddb_requests.reset()
    response = customer.client.get("/")
    assert ddb_requests.ops == ["Query", "GetItem"]  # the account's items; the seller's tax profile
    html = response.content.decode()
    [card_first, card_moved] = cards_of(html)  # sorted by next payment date
    assert re.search(r'data-testid="next-payment">10 Jan 2027 · <span[^>]*>\$1\.61</span> <span[^>]*>\(prorated\)',
                     card_first)
    assert re.search(r'data-testid="paid-through">9 Jan 2027<', card_first)
    assert re.search(r'data-testid="next-payment">15 Feb 2027 · <span[^>]*>\$14\.99</span> <span[^>]*>\(prorated\)',
                     card_moved)
    assert re.search(r'data-testid="paid-through">14 Feb 2027<', card_moved)
    upcoming = [(p["date"], p["sub"].SKU, p["amount"]) for p in response.context["upcoming"]]
    # after its prorated first period, each one pays the monthly price from its anchor
    assert upcoming[:2] == [(date(2027, 1, 10), "NEWS-DAILY", 161), (date(2027, 1, 15), "NEWS-DAILY", 999)]
    assert upcoming[2][0] == date(2027, 2, 15)
    four = upcoming_payments(response.context["live"], count=5)
    assert {(p["date"], p["sub"].SKU, p["amount"]) for p in four[2:]} == {
        (date(2027, 2, 15), "NEWS-DAILY", 999), (date(2027, 2, 15), "GYM", 1499),
        (date(2027, 3, 15), "NEWS-DAILY", 999)}
    # the moved one's payment after that is on its new anchor, 1 April, at the full price
    assert [(p["date"], p["amount"]) for p in upcoming_payments([moved], count=2)] == [
        (date(2027, 2, 15), 1499), (date(2027, 4, 1), 999)]
    assert first.PaymentAmount == 999


def test_a_full_period_is_not_marked_prorated(customer) -> None:
    sub = subscribe(customer, "NEWS-DAILY", day=15, on=date(2027, 1, 10))
    access.set_schedule(sub, next_payment=date(2027, 2, 15), last_payment=date(2027, 1, 15),
                        next_reminder=date(2027, 2, 8), last_reminder=date(2027, 1, 8))
    html = customer.client.get("/").content.decode()
    [card] = cards_of(html)
    assert re.search(r'data-testid="next-payment">15 Feb 2027 · <span[^>]*>\$9\.99</span></dd>', card)
    assert "prorated" not in card
    upcoming = [(p["date"], p["amount"]) for p in customer.client.get("/").context["upcoming"]]
    assert upcoming == [(date(2027, 2, 15), 999), (date(2027, 3, 15), 999), (date(2027, 4, 15), 999)]


def test_the_subscription_page_shows_the_same(customer, ddb_requests) -> None:
    sub = subscribe(customer, "NEWS-DAILY", day=15, on=date(2027, 1, 10))
    ddb_requests.reset()
    html = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    # the subscriptions; the payment history; the seller's tax profile (the amounts' tax)
    assert ddb_requests.ops == ["Query", "Query", "GetItem"]
    assert re.search(r'data-testid="next-amount">\$1\.61<', html)
