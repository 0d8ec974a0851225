"""Customer-facing pages."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from . import access


def home(request: HttpRequest) -> HttpResponse:
    """Until the portal lands: what the table holds, for a quick look after `make run`."""
    return render(request, "billing/home.html", {"stats": access.table_overview(get_user_model().objects.order_by("pk").values_list("pk", flat=True))})


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    return render(request, "500.html", status=500)
