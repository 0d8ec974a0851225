"""What every portal page shares: the customer's account id in the session (never in the
URL), the ``customer_required`` decorator, the session keys and the stale-form message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import redirect
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.language import remember_language

log = logging.getLogger("billing")

SESSION_ACCOUNT = "account_id"
SESSION_PENDING = "pending_subscription"
RECEIPT_MONTHS = 6


STALE_MESSAGE = _(
    "This subscription was changed elsewhere (another tab or device) while you were looking "
    "at it. We have shown you the latest version: please check it and try again."
)


def remember_account(request: HttpRequest) -> str | None:
    """Put the user's account id and language in the session: one GetItem (the user
    link, which carries both), only when missing."""
    account_id = request.session.get(SESSION_ACCOUNT)
    if not account_id and request.user.is_authenticated:
        link = access.get_user_link(request.user.pk)
        account_id = link.AccountId if link else None
        if link:
            request.session[SESSION_ACCOUNT] = account_id
            remember_language(request, link.Language)
    return account_id


def customer_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``login_required`` plus the account id from the session as ``account_id``.

    Staff users without a billing account belong in the admin; a customer whose sign-up
    stopped between creating the user and the account gets the account now.
    """

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        account_id = remember_account(request)
        if not account_id:
            if request.user.is_staff:
                return redirect("admin:index")
            account = access.create_account(request.user.email or request.user.get_username(),
                                            user_id=request.user.pk)
            account_id = request.session[SESSION_ACCOUNT] = account.account_id
        return view(request, account_id, *args, **kwargs)

    return wrapper
