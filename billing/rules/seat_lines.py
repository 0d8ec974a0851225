"""The seats an invoice line pays for, as Stripe's proration line shows its item's
``quantity``: a switch's charge of several seats (the switch keeps them) stores them on
its line (``TaxLineMap.Quantity`` and ``SeatPrice``), and so does a period's charge (the
first payment and every renewal: the payment run reads ``Quantity`` and ``UnitAmount``
from GSI-2, which projects them); the line is worded when it is read, in its reader's
language ("Team: $20.00 a seat × 5"). A line of one seat stores nothing and reads as
before. Both charges carry the seats in their metadata, so a receipt recorded later (a
webhook, the reconciliation) names the seats charged for.
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


def seats_metadata(sub: object) -> dict[str, str]:
    """A period's charge's metadata of the seats ``sub`` holds (none for one seat), as
    ``charge_seats`` reads them back."""
    quantity = getattr(sub, "Quantity", None)
    if quantity is None or int(quantity) <= 1:
        return {}
    unit = getattr(sub, "UnitAmount", None)
    return {"quantity": str(int(quantity)), "unit_amount": "" if unit is None else str(int(unit))}


def charge_seats(metadata: dict[str, str]) -> LineSeats | None:
    """The seats a switch's or a period's charge names in its metadata (``quantity``,
    ``unit_amount``: empty when priced by tiers), for its receipt (recorded now or later).
    A change of seats' charge (``kind`` ``seats``) pays for the seats added alone: none."""
    if metadata.get("kind") not in (None, "switch") or not metadata.get("quantity"):
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
