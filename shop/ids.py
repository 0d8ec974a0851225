"""Every id that reaches a key is checked here first (docs/SHOP.md; docs/TABLE.md, "Ids are
checked before they reach a key").

A bad id from a URL or a form is an ``InvalidInput`` (or ``None`` from a look-up),
never a 500: too long for a key, empty, or holding '#' (which would make a key
ambiguous) or anything outside letters, digits, '-', '_' and '.'.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from shop.errors import InvalidInput

MAX_ID_LENGTH = 64
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# What an id is called in a message, by the ``what`` the callers pass (which stays the
# error's ``field``, an English key).
_NAMES = {
    "id": _("Id"), "product id": _("Product id"), "warehouse id": _("Warehouse id"),
    "order id": _("Order id"), "shipment id": _("Shipment id"), "customer id": _("Customer id"),
    "category": _("Category"), "discount code": _("Discount code"), "checkout token": _("Checkout token"),
}


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and _ID.fullmatch(value) is not None


def check_id(value: object, what: str = "id") -> str:
    """The id itself, or ``InvalidInput`` saying why it cannot be one (in the active language)."""
    name = _NAMES.get(what, what)
    if not isinstance(value, str) or not value:
        raise InvalidInput(gettext("%(what)s is missing.") % {"what": name}, field=what)
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInput(gettext("%(what)s is too long (at most %(count)s characters).")
                           % {"what": name, "count": MAX_ID_LENGTH}, field=what)
    if not _ID.fullmatch(value):
        raise InvalidInput(gettext("%(what)s may hold only letters, digits, '-', '_' and '.'.") % {"what": name},
                           field=what)
    return value


def normalize_discount_code(code: object) -> str:
    """Discount codes are case-insensitive: stored and looked up upper-case."""
    return check_id(code.strip().upper() if isinstance(code, str) else code, "discount code")


def gift_card_hash(code: str) -> str:
    """The key of a gift card: the SHA-256 of its normalized code (a bearer secret is never stored)."""
    normalized = "".join(code.split()).upper()
    if not normalized or len(normalized) > MAX_ID_LENGTH:
        raise InvalidInput(gettext("That gift card code is not valid."), field="gift card")
    return hashlib.sha256(normalized.encode()).hexdigest()


def new_id() -> str:
    return secrets.token_hex(8)
