"""Credit notes: read by the customer's and staff's pages. Each is written by the refund
that issues it, in the refund's own write; here only the reads.

An account has few credit notes (one per refund), all under its partition with the
``CRN#`` prefix: one Query finds them, newest first, and the look-ups by number or by
the invoice corrected filter that Query."""

from __future__ import annotations

from billing.access._common import absent_if_invalid
from billing.models import CreditNote, Receipt

CREDIT_NOTE_PREFIX = "CRN#"


@absent_if_invalid(list)
def get_credit_notes_by_account(account_id: str) -> list[CreditNote]:
    """Query ``PK = ACC#<account>, SK begins_with CRN#``, newest first."""
    return list(CreditNote.query(CreditNote.pk(account_id=account_id), CreditNote.SK.startswith(CREDIT_NOTE_PREFIX),
                                 scan_index_forward=False))


@absent_if_invalid()
def get_credit_note(account_id: str, number: str) -> CreditNote | None:
    """The account's credit note numbered ``number``, or None (another account's too)."""
    return next((note for note in get_credit_notes_by_account(account_id) if note.Number == number), None)


def credit_notes_of_receipt(receipt: Receipt) -> list[CreditNote]:
    """The credit notes that correct ``receipt`` (one per refund of it), oldest first."""
    notes = [note for note in get_credit_notes_by_account(receipt.account_id) if note.ReceiptSK == receipt.SK]
    return sorted(notes, key=lambda note: note.SK)
