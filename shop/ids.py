"""Every id that reaches a key is checked here first (SHOP-DESIGN.md, DESIGN.md invariant 9).

A bad id from a URL or a form is an ``InvalidInput`` (or ``None`` from a look-up),
never a 500: too long for a key, empty, or holding '#' (which would make a key
ambiguous) or anything outside letters, digits, '-', '_' and '.'.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from shop.errors import InvalidInput

MAX_ID_LENGTH = 64
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and _ID.fullmatch(value) is not None


def check_id(value: object, what: str = "id") -> str:
    """The id itself, or ``InvalidInput`` saying why it cannot be one."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"The {what} is missing.", field=what)
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInput(f"The {what} is too long (at most {MAX_ID_LENGTH} characters).", field=what)
    if not _ID.fullmatch(value):
        raise InvalidInput(f"The {what} may hold only letters, digits, '-', '_' and '.'.", field=what)
    return value


def normalize_discount_code(code: object) -> str:
    """Discount codes are case-insensitive: stored and looked up upper-case."""
    return check_id(code.strip().upper() if isinstance(code, str) else code, "discount code")


def gift_card_hash(code: str) -> str:
    """The key of a gift card: the SHA-256 of its normalized code (a bearer secret is never stored)."""
    normalized = "".join(code.split()).upper()
    if not normalized or len(normalized) > MAX_ID_LENGTH:
        raise InvalidInput("That gift card code is not valid.", field="gift card")
    return hashlib.sha256(normalized.encode()).hexdigest()


def new_id() -> str:
    return secrets.token_hex(8)
