"""What the portal's and the staff's pages share: the billing day, who acts, the form data
of a request, and the subscription look-up that answers 404.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest
from django.utils.translation import gettext as _

from billing import access
from billing.models import Subscription
from billing.schedule import billing_today


def today() -> date:
    """Today in ``BILLING_TIMEZONE`` (DESIGN.md invariant 7)."""
    return billing_today(settings.BILLING_TIMEZONE)


def actor(request: HttpRequest) -> str:
    """Who made a change, as audit events record it."""
    return request.user.email or request.user.get_username()


def bound_data(request: HttpRequest) -> Any:
    """The data to bind a form to: an empty POST is still a submission, so its errors show."""
    return request.POST if request.method == "POST" else None


def subscription_or_404(account_id: str, sub_id: str) -> Subscription:
    """The account's subscription, or 404: another account's id is simply not found."""
    sub = access.get_subscription(account_id, sub_id)
    if sub is None:
        raise Http404(_("No such subscription"))
    return sub
