"""The payment processor's events as rpay received them: one UTC day at a time (its
``WEBHOOKS#<day>`` partition, one Query), newest first, with how each ended."""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.staff.forms import DayForm
from core.staff import render_staff

# How each stored status reads on the page (the webhook's own words otherwise).
EVENT_STATUS_LABELS = {
    "done": _("done"),
    "ignored": _("ignored"),
    "failed": _("failed"),
    "received": _("received"),
}


def webhook_events(request: HttpRequest) -> HttpResponse:
    today = access.utc_now().date()
    form = DayForm(request.GET if "day" in request.GET else {"day": today.isoformat()})
    if not form.is_valid():  # a typo in the URL: say so, read nothing
        return render_staff(request, "staff/webhook_events.html", gettext("Webhook events"), {
            "form": form, "day": None, "today": today})
    day = form.cleaned_data["day"]
    events = access.get_webhook_events(day)
    return render_staff(request, "staff/webhook_events.html", gettext("Webhook events"), {
        "form": form,
        "day": day,
        "today": today,
        "previous": (day - timedelta(days=1)).isoformat() if day > form.FIRST else None,
        "next": (day + timedelta(days=1)).isoformat() if day < form.LAST else None,
        "events": [{"event": e, "status": str(EVENT_STATUS_LABELS.get(e.Status, e.Status))} for e in events],
        "full": len(events) >= access.WEBHOOK_PAGE_SIZE,
        "page_size": access.WEBHOOK_PAGE_SIZE,
    })
