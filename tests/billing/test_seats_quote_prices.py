"""What a change of seats is quoted at (billing/rules/seats.py ``quote_seats``), pure: seats
priced by their price's tiers at the tiers' whole prices before and after (volume: $10.00
a seat up to 10, $8.00 each from 11), seats with a price a seat at that price, even when
handed the price's tiers; the difference prorated for the days paid (25 March to 9 April,
16 of 31)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from billing.models import Subscription
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.rules.seats import quote_seats

pytestmark = pytest.mark.django_db(databases=[])

MID = date(2027, 3, 25)
VOLUME = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                    tiers=(Tier(10, Decimal(1000)), Tier(None, Decimal(800))))
COMMON = {"Status": "active", "PaymentDay": 10, "PaidThroughDate": "2027-04-09", "NextPaymentDate": "2027-04-10",
          "CreatedDate": "2027-03-10T12:00:00+00:00", "Currency": "USD", "Quantity": 10, "PaymentAmount": 10000}


def quoted(q) -> tuple:
    return q.unit_amount, q.old_price, q.new_price, q.amount, q.due_now, q.credit_now


def test_seats_priced_by_tiers_are_quoted_at_the_tiers_whole_prices() -> None:
    tiered = Subscription(**COMMON)  # no price a seat
    # 10 seats at $10.00, 11 at $8.00: 88.00 a month is 12.00 less, 16/31 of it credited
    assert quoted(quote_seats(tiered, 11, MID, VOLUME)) == (None, 10000, 8800, 619, 0, 619)


def test_seats_with_a_price_a_seat_are_quoted_at_it_even_when_handed_tiers() -> None:
    per_seat = Subscription(UnitAmount=1000, **COMMON)
    assert quoted(quote_seats(per_seat, 11, MID, VOLUME)) == quoted(quote_seats(per_seat, 11, MID)) == \
        (1000, 10000, 11000, 516, 516, 0)
