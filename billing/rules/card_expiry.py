"""When a card stops working, as a date rule: a card is good through the last
day of its expiry month, so it cannot pay a payment due in any later month."""

from __future__ import annotations

from datetime import date

from billing.models import PaymentDetails


def expires_before(card: PaymentDetails | None, payment: date) -> bool:
    """True when the card's expiry month ends before ``payment`` (no card: False, there
    is nothing to warn about that replacing it would fix)."""
    if card is None or card.ExpYear is None or card.ExpMonth is None:
        return False
    return (int(card.ExpYear), int(card.ExpMonth)) < (payment.year, payment.month)
