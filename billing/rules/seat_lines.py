"""The seats an invoice line pays for, as Stripe's proration line shows its item's
``quantity``: a switch's charge of several seats (the switch keeps them) stores them on
its line (``TaxLineMap.Quantity`` and ``SeatPrice``), and the line is worded when it is
read, in its reader's language ("Team: $20.00 a seat × 5"). A line of one seat stores
nothing and reads as before. (A renewal's line names no seats yet: the payment run reads
the subscription from GSI-1, which projects neither ``Quantity`` nor ``UnitAmount``.)
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


def line_seats(quantity: int, unit_amount: int | None) -> LineSeats | None:
    """The seats a line names: None for one seat (its line reads as ever)."""
    return LineSeats(quantity, unit_amount) if quantity > 1 else None


def charge_seats(metadata: dict[str, str]) -> LineSeats | None:
    """The seats a switch's charge names in its metadata (``quantity``, ``unit_amount``:
    empty when priced by tiers), for its receipt when the switch is recorded later."""
    if metadata.get("kind") != "switch" or not metadata.get("quantity"):
        return None
    unit = metadata.get("unit_amount") or ""
    return line_seats(int(metadata["quantity"]), int(unit) if unit else None)


def mark_seats(line: TaxLineMap, seats: LineSeats | None) -> None:
    """Store ``seats`` on a receipt's fixed-fee line (nothing for one seat)."""
    if seats is not None:
        line.Quantity, line.SeatPrice = seats.quantity, seats.unit_amount


def stored_seats(line: TaxLineMap) -> LineSeats | None:
    """The seats a stored line names (None: one, every line before seats included)."""
    quantity = getattr(line, "Quantity", None)
    if quantity is None:
        return None
    price = getattr(line, "SeatPrice", None)
    return line_seats(int(quantity), int(price) if price is not None else None)


def seats_words(quantity: int, unit_price: str | None) -> str:
    """The seats in words, in the active language, as the subscription page says them
    ("$20.00 a seat × 5", "5 seats, priced by tiers"); "" for one seat. ``unit_price``:
    one seat's price, formatted as the reader's page formats money (None: by tiers)."""
    if quantity <= 1:
        return ""
    if unit_price is None:
        return _("%(n)s seats, priced by tiers") % {"n": quantity}
    return _("%(unit)s a seat × %(n)s") % {"unit": unit_price, "n": quantity}


def line_seats_words(seats: LineSeats, currency: str) -> str:
    """A line's seats in words, its seat's price as a customer's page formats money."""
    unit = None if seats.unit_amount is None else format_with_symbol(seats.unit_amount, currency)
    return seats_words(seats.quantity, unit)
