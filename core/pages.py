"""What the portal's and the staff's pages share: the billing day, who acts, the form
data of a request.
"""

from __future__ import annotations

from datetime import date
from typing import Any, TypeVar

from django.conf import settings
from django.http import Http404, HttpRequest

from core.clock import billing_today


def today() -> date:
    """Today in ``BILLING_TIMEZONE`` (docs/TABLE.md, "A day is a calendar day in the billing time zone")."""
    return billing_today(settings.BILLING_TIMEZONE)


def actor(request: HttpRequest) -> str:
    """Who made a change, as audit events record it."""
    return request.user.email or request.user.get_username()


def bound_data(request: HttpRequest) -> Any:
    """The data to bind a form to: an empty POST is still a submission, so its errors show."""
    return request.POST if request.method == "POST" else None


Found = TypeVar("Found")


def or_404(found: Found | None, what: str) -> Found:
    """What a look-up found, or a 404 saying ``what`` was not: another account's id, or
    one that cannot be a key (invariant 9), is simply not found."""
    if found is None:
        raise Http404(what)
    return found
