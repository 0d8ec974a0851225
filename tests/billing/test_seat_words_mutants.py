"""The words of a price by tiers of seats on the seats page (``SeatPrice.words``, by
``rules.seats.tier_price_words``), pinned where mutation testing found them unpinned: "seat"
is the unit of a price that names none, and a price's own unit replaces it."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.utils import translation

from billing.actions.seats import SeatPrice
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode

# $10.00 a seat for the first 5 seats, $8.00 a seat after them
GRADUATED_SEATS = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                             tiers=(Tier(5, Decimal(1000)), Tier(None, Decimal(800))))
PACKS_OF_10 = PriceTerms("USD", unit_amount=Decimal(5000), package_size=10)  # $50.00 per 10 seats


@pytest.fixture(autouse=True)
def _english() -> Iterator[None]:
    with translation.override("en"):
        yield


@pytest.mark.parametrize(("terms", "words"), [
    (GRADUATED_SEATS, "first 5 seats at $10.00 a seat, then $8.00 a seat, a month"),
    (PACKS_OF_10, "$50.00 per 10 seats a month"),
])
def test_a_price_by_tiers_that_names_no_unit_counts_seats(terms: PriceTerms, words: str) -> None:
    assert SeatPrice((1, 100), terms).words() == words


@pytest.mark.parametrize(("terms", "words"), [
    (GRADUATED_SEATS, "first 5 agents at $10.00 an agent, then $8.00 an agent, a month"),
    (PACKS_OF_10, "$50.00 per 10 agents a month"),
])
def test_a_price_by_tiers_counts_the_unit_it_names(terms: PriceTerms, words: str) -> None:
    assert SeatPrice((1, 100), terms, unit_label="agent").words() == words


def test_a_price_of_one_amount_a_seat_has_no_tier_words() -> None:
    assert SeatPrice((1, 100)).words() == ""
