"""Cursor paging: the cursor is DynamoDB's ``LastEvaluatedKey``, signed with the site's
secret (django.core.signing) so it is opaque and cannot be forged into another list or
another customer's partition (the list and its partition are in the signature's salt).
Each page is one Query (billing/access/api_pages.py)."""

from __future__ import annotations

from typing import Any

from django.core import signing

from billing.access import Page
from billing.api.errors import ApiError

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def start_key(cursor: str | None, scope: str) -> dict[str, Any] | None:
    """The key a list goes on from; a cursor not made for this list is a 400."""
    if not cursor:
        return None
    try:
        key = signing.loads(cursor, salt=f"rpay.api.cursor:{scope}")
    except signing.BadSignature:
        raise ApiError(400, "That cursor is not one this list gave.", param="cursor") from None
    if not isinstance(key, dict):
        raise ApiError(400, "That cursor is not one this list gave.", param="cursor")
    return key


def page_body(page: Page, scope: str, shown: list[dict[str, Any]]) -> dict[str, Any]:
    """A list's answer: its objects and the cursor of the next page (null at the end)."""
    cursor = signing.dumps(page.next_key, salt=f"rpay.api.cursor:{scope}", compress=True) if page.next_key else None
    return {"object": "list", "data": shown, "has_more": cursor is not None, "next_cursor": cursor}
