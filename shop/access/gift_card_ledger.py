"""A gift card's ledger: one ``giftCardEntry`` per movement of its balance (issued,
paid an order, put back), written in the same transaction as the balance change, in
the card's own partition, so the card and its newest movements are one Query."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC

from shop.clock import utc_now
from shop.errors import InvalidInput
from shop.ids import gift_card_hash
from shop.models import GiftCard, GiftCardEntry, ShopItem

LEDGER_PAGE = 50  # movements shown with a card (newest first)


@dataclass
class GiftCardLedger:
    """A card and its newest movements, each with the balance it left."""

    card: GiftCard
    entries: list[GiftCardEntry] = field(default_factory=list)
    more: bool = False  # older movements exist beyond the page

    def rows(self) -> list[tuple[GiftCardEntry, int]]:
        """(movement, balance after it), newest first: walked back from today's balance."""
        out, balance = [], self.card.Balance
        for entry in self.entries:
            out.append((entry, balance))
            balance -= entry.Amount
        return out


def ledger_entry(code_hash: str, kind: str, amount: int, currency: str, actor: str,
                 order_id: str | None = None, at: str | None = None) -> GiftCardEntry:
    """The item recording one movement (``amount`` signed: + credit, - debit), at the
    microsecond (``at``: now), so that two movements within one second still sort in the
    order they were made."""
    at = at or utc_now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    entry_id = GiftCardEntry.entry_id(kind, order_id)
    return GiftCardEntry(**GiftCardEntry.keys(code_hash=code_hash, at=at, entry_id=entry_id), Kind=kind,
                         Amount=amount, Currency=currency, At=at, Actor=actor or "system", OrderId=order_id)


def get_gift_card_with_ledger(code: str, limit: int = LEDGER_PAGE) -> GiftCardLedger | None:
    """Query PK = gc#<hash>, newest first (consistent, so the movements add up to the
    balance read with them): the card, then its ``limit`` newest movements."""
    try:
        pk = GiftCard.pk(code_hash=gift_card_hash(code))
    except InvalidInput:
        return None
    rows = list(ShopItem.query(pk, scan_index_forward=False, consistent_read=True, limit=limit + 2))
    card = next((r for r in rows if isinstance(r, GiftCard)), None)
    if card is None:
        return None
    entries = [r for r in rows if isinstance(r, GiftCardEntry)]
    return GiftCardLedger(card=card, entries=entries[:limit], more=len(entries) > limit)
