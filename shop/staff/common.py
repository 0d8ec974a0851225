"""What the shop's staff pages share: rendering inside the admin, the audit trail of
shop changes, and the look-ups that answer 404."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from billing.customers import record_staff_event, staff_events
from core.pages import actor, or_404
from core.staff import render_staff
from shop import access
from shop.access import OrderDetails

# Shop changes belong to no customer: their audit events go to this pseudo-account.
SHOP_EVENTS_ACCOUNT = "SHOP"


def render_shop_staff(request: HttpRequest, template: str, title: str, context: dict[str, Any] | None = None,
                      status: int = 200) -> HttpResponse:
    return render_staff(request, f"shop/staff/{template}", title, context, status)


def audit(request: HttpRequest, action: str, subject: str, *, after: dict | None = None, note: str | None = None) -> None:
    record_staff_event(SHOP_EVENTS_ACCOUNT, actor=actor(request), action=action, subject=subject,
                                 after=after, note=note)


def recent_events(limit: int = 20) -> list:
    return staff_events(SHOP_EVENTS_ACCOUNT, limit=limit)


def order_or_404(order_id: str, *, consistent: bool = False) -> OrderDetails:
    return or_404(access.get_order_details_by_order_id(order_id, consistent=consistent), "No such order")
