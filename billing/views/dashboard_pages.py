"""The landing page and the dashboard: the account's whole item collection in one Query,
with the next payments and monthly totals worked out from it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from itertools import islice
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from billing import access
from billing.batches import owed_amount, owed_period
from billing.customers import customer_required
from billing.models import Subscription, SubscriptionStatus
from billing.rules.lifecycle import state_of
from billing.rules.schedule import period_end
from core.pages import today


def upcoming_payments(subs: list[Subscription], count: int = 3) -> list[dict[str, Any]]:
    """The next ``count`` payments over all live subscriptions, soonest first, each with
    the amount it will charge.

    Each subscription's first one is its ``NextPaymentDate`` (a retry date while past
    due) for the period owed, prorated as the payment run will charge it (after a change
    of day it runs to the new day's anchor, a month or more on); each later one starts the
    day after the period before ends and costs the monthly price (DESIGN-NOTES "Money rules").
    """

    def dates(sub: Subscription) -> Iterator[tuple[date, str, Subscription, int]]:
        _, end = owed_period(sub)
        yield date.fromisoformat(sub.NextPaymentDate), sub.SK, sub, owed_amount(sub)
        while True:
            start = end + timedelta(days=1)
            end = period_end(int(sub.PaymentDay), start)
            yield start, sub.SK, sub, int(sub.PaymentAmount)

    streams = [dates(s) for s in subs if s.NextPaymentDate]
    return [
        {"date": d, "sub": s, "amount": amount, "currency": s.Currency}
        for d, _, s, amount in islice(heapq.merge(*streams, key=lambda item: item[:2]), count)
    ]


def monthly_totals(subs: list[Subscription]) -> list[tuple[str, int]]:
    """The monthly price of ``subs`` per currency (the caller leaves the paused ones out:
    nothing is charged for them until they resume)."""
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
    # One state per subscription (rules.lifecycle.state_of), the badge's: the cards list
    # the live ones, those cancelling at period end (still served) and the incomplete ones
    # (a "Finish payment" link); only the live ones are charged and counted.
    states = {s.SK: state_of(s, today()) for s in collection.subscriptions}
    live = sorted((s for s in collection.subscriptions if states[s.SK].live), key=lambda s: s.NextPaymentDate or "")
    listed = sorted((s for s in collection.subscriptions if states[s.SK].listed),
                    key=lambda s: (states[s.SK].kind != "incomplete", s.NextPaymentDate or s.PaidThroughDate or ""))
    cancelled = [s for s in collection.subscriptions if states[s.SK].kind == "ended"]
    paused = [s for s in live if states[s.SK].kind == "paused"]
    return render(request, "portal/dashboard.html", {
        "account": collection.account,
        "live": live,
        "listed": listed,
        "cancelled": cancelled,
        "not_started": [s for s in collection.subscriptions if states[s.SK].kind == "not_started"],
        "upcoming": upcoming_payments(live),
        "totals": monthly_totals([s for s in live if s not in paused]),
        "paused_count": len(paused),
        "past_due": [s for s in live if s.Status == SubscriptionStatus.PAST_DUE],
    })
