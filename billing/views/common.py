"""What every portal page shares: the session keys, the stale-form message and the
subscription look-up that answers 404 (the customer's account: ``billing.customers``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as gettext_now
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Subscription
from core.pages import or_404

log = logging.getLogger("billing")

SESSION_PENDING = "pending_subscription"
# A subscription whose first charge the customer's bank asks them to confirm (3-D Secure).
SESSION_AUTHENTICATE = "authenticate_subscription"
RECEIPT_MONTHS = 6


STALE_MESSAGE = _(
    "This changed since you opened the page: it was changed elsewhere (another tab or device). "
    "Here it is as it is now: please check it and try again."
)


def changed_since(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    """The answer to a form drawn from something that changed since (another tab): the
    page again, drawn from the item as it is now, with the message; nothing was done.
    409 Conflict, never a silent redirect, a dropped choice or a 404."""
    messages.warning(request, STALE_MESSAGE)
    return render(request, template, context, status=409)


def subscription_or_404(account_id: str, sub_id: str) -> Subscription:
    """The account's subscription, or 404: another account's id is simply not found."""
    return or_404(access.get_subscription(account_id, sub_id), gettext_now("No such subscription"))


def live_subscription(cancelled: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A page that changes a live subscription (under ``customer_required``): the view is
    given the account's subscription the URL's ``sub_id`` names (404 for another
    account's); a cancelled one is sent back to its own page with ``cancelled`` said."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def on_live(request: HttpRequest, account_id: str, sub_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
            sub = subscription_or_404(account_id, sub_id)
            if not sub.is_live:
                messages.info(request, str(cancelled))
                return redirect("subscription", sub_id=sub_id)
            return view(request, account_id, sub, *args, **kwargs)

        return on_live

    return decorate
