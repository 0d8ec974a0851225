"""The meters' staff pages (docs/USAGE.md): the list (one Query) and adding one (the finance
and admin roles: a meter decides what customers are charged for, as a price does); and a
customer's usage of each meter (whoever sees billing, from the account page)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from billing import access
from billing.access import usage as metered
from billing.actions import meters as actions
from billing.models import Meter, MeterAggregation
from billing.rules.usage import EVENT_NAME, EventRefused
from billing.staff.common import add_page
from core.pages import actor, bound_data, or_404, today
from core.staff import render_staff

AGGREGATIONS = [
    (MeterAggregation.COUNT, gettext_lazy("count: the events")),
    (MeterAggregation.SUM, gettext_lazy("sum: of the events' values")),
    (MeterAggregation.MAX, gettext_lazy("max: the largest value")),
    (MeterAggregation.UNIQUE_COUNT, gettext_lazy("unique count: the distinct values")),
    (MeterAggregation.LAST, gettext_lazy("last: the value of the latest event")),
]


def aggregation_label(meter: Meter) -> str:
    """The meter's aggregation in words (a value no longer offered: as stored)."""
    return dict(AGGREGATIONS).get(meter.Aggregation, meter.Aggregation)


class MeterForm(forms.Form):
    event_name = forms.RegexField(EVENT_NAME, max_length=100, label=gettext_lazy("Event name"),
                                  help_text=gettext_lazy("What usage events and metered prices name the meter by: "
                                                         "lower-case letters, digits, '_', '.' or '-'."))
    name = forms.CharField(max_length=actions.MAX_NAME, label=gettext_lazy("Name"))
    aggregation = forms.ChoiceField(choices=AGGREGATIONS, label=gettext_lazy("Aggregation over a period"))


def meters(request: HttpRequest) -> HttpResponse:
    return render_staff(request, "staff/meters.html", _("Meters"), {
        "meters": [(m, aggregation_label(m)) for m in metered.list_meters()]})


@require_http_methods(["GET", "POST"])
def meter_add(request: HttpRequest) -> HttpResponse:
    def add(data: dict[str, Any]) -> HttpResponse:
        try:
            meter = actions.add_meter(data["event_name"], data["name"], MeterAggregation(data["aggregation"]),
                                      actor=actor(request))
        except EventRefused as refused:
            form.add_error(refused.param, refused.message)
            return render_staff(request, "staff/object_form.html", _("Add a meter"),
                                {"back": "admin:staff_meters", "form": form})
        messages.success(request, _("Meter %(name)s added.") % {"name": meter.EventName})
        return redirect("admin:staff_meters")

    form = MeterForm(bound_data(request))
    return add_page(request, form, _("Add a meter"), "admin:staff_meters", add,
                    taken=("event_name", _("A meter with this event name already exists.")))


def customer_usage(request: HttpRequest, account_id: str) -> HttpResponse:
    """A customer's usage of every meter: this month so far and last month (billing days), one
    Query per meter (eventually consistent: a display, not a bill)."""
    account = or_404(access.get_account(account_id), "No such account")
    day = today()
    this_month = day.replace(day=1)
    last_month = (this_month - timedelta(days=1)).replace(day=1)
    rows = [{"meter": meter, "aggregation": aggregation_label(meter),
             "so_far": metered.usage_of(meter, account_id, this_month, day + timedelta(days=1)),
             "last_month": metered.usage_of(meter, account_id, last_month, this_month)}
            for meter in metered.list_meters()]
    return render_staff(request, "staff/customer_usage.html", _("Metered usage: %(email)s") % {"email": account.Email},
                        {"account_id": account_id, "rows": rows, "this_month": this_month, "last_month": last_month})
