"""What every staff page shares: the money permission, rendering inside the admin's own
layout, the confirm page, and the look-ups that 404.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from billing import access
from billing.models import Receipt, Subscription
from billing.schedule import billing_today

MONEY_PERMISSION = "billing.manage_money"


def _today() -> date:
    return billing_today(settings.BILLING_TIMEZONE)


def _actor(request: HttpRequest) -> str:
    return request.user.email or request.user.get_username()


def _require_money(request: HttpRequest) -> None:
    if not request.user.has_perm(MONEY_PERMISSION):
        raise PermissionDenied("Refunds and payment retries need the 'Can refund and retry payments' permission.")


def _render(request: HttpRequest, template: str, title: str, context: dict[str, Any] | None = None,
            status: int = 200) -> HttpResponse:
    # The admin's own context (site header, user links, sidebar) so the pages look native.
    from django.contrib import admin

    ctx = {**admin.site.each_context(request), "title": title, "can_manage_money":
           request.user.has_perm(MONEY_PERMISSION), **(context or {})}
    return render(request, template, ctx, status=status)


def _account_url(account_id: str) -> str:
    return reverse("admin:staff_account", args=[account_id])


def _subscription_or_404(account_id: str, sub_id: str) -> Subscription:
    sub = access.get_subscription(account_id, sub_id)
    if sub is None:
        raise Http404("No such subscription")
    return sub


def _confirm(request: HttpRequest, account_id: str, title: str, question: str, *,
             sub: Subscription | None = None, receipt: Receipt | None = None, form=None,
             button: str = "Confirm", danger: bool = False) -> HttpResponse:
    return _render(request, "staff/confirm.html", title, {
        "account_id": account_id, "question": question, "sub": sub, "receipt": receipt,
        "form": form, "button": button, "danger": danger, "back": _account_url(account_id),
    })
