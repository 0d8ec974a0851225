"""What every staff page shares: rendering inside the admin's own layout, the confirm
page, and the account page's URL. (Permissions: ``permissions``, checked in ``urls``.)
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from billing.models import Receipt, Subscription


def render_staff(request: HttpRequest, template: str, title: str, context: dict[str, Any] | None = None,
                 status: int = 200) -> HttpResponse:
    """Render inside the admin's own context (site header, user links, sidebar), so the
    staff pages look native. Templates show only the actions the user may take, through
    Django's ``perms`` (e.g. ``perms.billing.manage_money``)."""
    from django.contrib import admin

    ctx = {**admin.site.each_context(request), "title": title, **(context or {})}
    return render(request, template, ctx, status=status)


def account_url(account_id: str) -> str:
    return reverse("admin:staff_account", args=[account_id])


def confirm_page(request: HttpRequest, account_id: str, title: str, question: str, *,
                 sub: Subscription | None = None, receipt: Receipt | None = None, form=None,
                 button: str = "Confirm", danger: bool = False) -> HttpResponse:
    """The page that asks staff to confirm an action on an account before it is taken."""
    return render_staff(request, "staff/confirm.html", title, {
        "account_id": account_id, "question": question, "sub": sub, "receipt": receipt,
        "form": form, "button": button, "danger": danger, "back": account_url(account_id),
    })
