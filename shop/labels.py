"""The shop's stored states and ledger kinds (English identifiers such as
"partially_shipped") as words in the active language, for the staff pages and the
messages that name a state."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

# Orders, shipments, payments and products (shop.models' *Status classes).
STATUS = {
    "pending_payment": _("Pending payment"),
    "paid": _("Paid"),
    "partially_shipped": _("Partially shipped"),
    "shipped": _("Shipped"),
    "declined": _("Declined"),
    "cancelled": _("Cancelled"),
    "refunded": _("Refunded"),
    "created": _("To be picked"),
    "succeeded": _("Succeeded"),
    "reversed": _("Reversed"),
    "active": _("On sale"),  # a product (an order is never "active")
    "retired": _("Retired"),
}

# A gift card's ledger (shop.models.GiftCardEntryKind); the staff page shows the order
# in a column of its own.
MOVEMENT = {
    "issued": _("Issued"),
    "debit": _("Paid an order"),
    "reversal": _("Back: the order's card was declined"),
    "cancel": _("Back: the order was cancelled"),
    "refund": _("Back: the order was refunded"),
}


def status_label(status: str | None) -> str:
    """A state's label; an unknown one (a newer state) shows as stored, never as nothing."""
    return str(STATUS.get(status or "", status or ""))


def movement_label(kind: str | None) -> str:
    return str(MOVEMENT.get(kind or "", kind or ""))


def status_in_sentence(status: str | None) -> str:
    """The label inside a sentence ("Order 42 is partially shipped."): in lower case,
    which suits every language rpay has (none capitalizes its nouns)."""
    return status_label(status).lower()
