"""The seats an invoice line pays for, as Stripe's proration line shows its item's
``quantity``: a switch's charge of several seats (the switch keeps them) stores them on
its line (``TaxLineMap.Quantity`` and ``SeatPrice``), and so does a period's charge (the
first payment and every renewal: the payment run reads ``Quantity`` and ``UnitAmount``
from GSI-2, which projects them); the line is worded when it is read, in its reader's
language ("Team: $20.00 a seat × 5"). A line of one seat stores nothing and reads as
before. A change of seats' charge pays for the seats added alone, for the days left: its
line names the seats before and after (``SeatsFrom``: "Team: $20.00 a seat, 2 → 5
seats"), as Stripe's proration line names the quantity it prorates. Every charge carries
the seats in its metadata, so a receipt recorded later (a webhook, the reconciliation)
names the seats charged for.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from billing.models import TaxLineMap
from core.money import format_with_symbol


@dataclass(frozen=True)
class LineSeats:
    """Several seats of a period's charge: how many, and one seat's price a period
    (minor units; None: a price by tiers of seats, which has no one price a seat)."""

    quantity: int
    unit_amount: int | None
    added_from: int | None = None  # a change of seats': the seats before it


def line_seats(quantity: int, unit_amount: int | None, added_from: int | None = None) -> LineSeats | None:
    """The seats a line names: None for one seat (its line reads as ever), unless it
    is a change of seats' (from ``added_from``)."""
    return LineSeats(quantity, unit_amount, added_from) if quantity > 1 or added_from is not None else None


def seats_metadata(sub: object) -> dict[str, str]:
    """A period's charge's metadata of the seats ``sub`` holds (none for one seat), as
    ``charge_seats`` reads them back."""
    quantity = getattr(sub, "Quantity", None)
    if quantity is None or int(quantity) <= 1:
        return {}
    unit = getattr(sub, "UnitAmount", None)
    return {"quantity": str(int(quantity)), "unit_amount": "" if unit is None else str(int(unit))}


def charge_seats(metadata: dict[str, str]) -> LineSeats | None:
    """The seats a switch's, a period's or a change of seats' charge names in its metadata
    (``quantity``, ``unit_amount``: empty when priced by tiers; a change of seats'
    ``old_quantity`` too), for its receipt (recorded now or later)."""
    kind = metadata.get("kind")
    if kind not in (None, "switch", "seats") or not metadata.get("quantity"):
        return None
    unit = metadata.get("unit_amount") or ""
    before = metadata.get("old_quantity") if kind == "seats" else None
    if kind == "seats" and not before:
        return None  # it pays for the seats added: never worded as if for them all
    return line_seats(int(metadata["quantity"]), int(unit) if unit else None, int(before) if before else None)


def mark_seats(line: TaxLineMap, seats: LineSeats | None) -> None:
    """Store ``seats`` on a receipt's fixed-fee line (nothing for one seat)."""
    if seats is not None:
        line.Quantity, line.SeatPrice, line.SeatsFrom = seats.quantity, seats.unit_amount, seats.added_from


def stored_seats(line: TaxLineMap) -> LineSeats | None:
    """The seats a stored line names (None: one, every line before seats included)."""
    quantity = getattr(line, "Quantity", None)
    if quantity is None:
        return None
    price, before = getattr(line, "SeatPrice", None), getattr(line, "SeatsFrom", None)
    return line_seats(int(quantity), int(price) if price is not None else None,
                      int(before) if before is not None else None)


def seats_words(quantity: int, unit_price: str | None) -> str:
    """The seats in words, in the active language, as the subscription page says them
    ("$20.00 a seat × 5", "5 seats, priced by tiers"); "" for one seat. ``unit_price``:
    one seat's price, formatted as the reader's page formats money (None: by tiers)."""
    if quantity <= 1:
        return ""
    if unit_price is None:
        return _("%(n)s seats, priced by tiers") % {"n": quantity}
    return _("%(unit)s a seat × %(n)s") % {"unit": unit_price, "n": quantity}


def seats_added_words(before: int, quantity: int, unit_price: str | None) -> str:
    """A change of seats' line in words ("$20.00 a seat, 2 → 5 seats"; by tiers: "2 → 5
    seats, priced by tiers"): it pays for the seats added, for the days left."""
    if unit_price is None:
        return _("%(before)s → %(n)s seats, priced by tiers") % {"before": before, "n": quantity}
    return _("%(unit)s a seat, %(before)s → %(n)s seats") % {"unit": unit_price, "before": before, "n": quantity}


def line_seats_words(seats: LineSeats, currency: str) -> str:
    """A line's seats in words, its seat's price as a customer's page formats money."""
    unit = None if seats.unit_amount is None else format_with_symbol(seats.unit_amount, currency)
    if seats.added_from is not None:
        return seats_added_words(seats.added_from, seats.quantity, unit)
    return seats_words(seats.quantity, unit)
