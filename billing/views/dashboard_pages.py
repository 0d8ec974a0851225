"""The landing page and the dashboard: the account's whole item collection in one Query,
with the next payments and monthly totals worked out from it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from itertools import islice
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from billing import access
from billing.models import Subscription, SubscriptionStatus
from billing.schedule import next_payment_date

from .common import customer_required


def upcoming_payments(subs: list[Subscription], count: int = 3) -> list[dict[str, Any]]:
    """The next ``count`` payments over all live subscriptions, soonest first.

    Each subscription's first one is its ``NextPaymentDate`` (a retry date while past
    due); later ones follow the anchor day from the period being paid.
    """

    def dates(sub: Subscription) -> Iterator[tuple[date, str, Subscription]]:
        current = date.fromisoformat(sub.NextPaymentDate)
        anchor = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
        yield current, sub.SK, sub
        while True:
            anchor = next_payment_date(int(sub.PaymentDay), anchor)
            yield anchor, sub.SK, sub

    streams = [dates(s) for s in subs if s.NextPaymentDate]
    return [
        {"date": d, "sub": s, "amount": s.PaymentAmount, "currency": s.Currency}
        for d, _, s in islice(heapq.merge(*streams, key=lambda item: item[:2]), count)
    ]


def monthly_totals(subs: list[Subscription]) -> list[tuple[str, int]]:
    totals: dict[str, int] = defaultdict(int)
    for sub in subs:
        totals[sub.Currency] += int(sub.PaymentAmount)
    return sorted(totals.items())


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "portal/landing.html")
    return dashboard(request)


@require_safe
@customer_required
def dashboard(request: HttpRequest, account_id: str) -> HttpResponse:
    collection = access.get_account_collection(account_id)  # the page's one Query
    live = sorted(collection.live_subscriptions, key=lambda s: s.NextPaymentDate or "")
    cancelled = [s for s in collection.subscriptions if not s.is_live]
    return render(request, "portal/dashboard.html", {
        "account": collection.account,
        "live": live,
        "cancelled": cancelled,
        "upcoming": upcoming_payments(live),
        "totals": monthly_totals(live),
        "past_due": [s for s in live if s.Status == SubscriptionStatus.PAST_DUE],
    })
