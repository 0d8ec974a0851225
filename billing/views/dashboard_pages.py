"""The landing page and the dashboard: the account's whole item collection in one Query,
with the next payments and monthly totals worked out from it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from itertools import islice
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from billing import access
from billing.customers import customer_required
from billing.models import Subscription, SubscriptionStatus
from billing.rules.lifecycle import state_of
from billing.rules.projection import coming_charges, next_full_month
from billing.rules.schedule import cadence_of
from core.pages import today


def upcoming_payments(subs: list[Subscription], count: int = 3) -> list[dict[str, Any]]:
    """The next ``count`` payments over all live subscriptions, soonest first, each with
    the amount it will charge: each subscription's coming charges (``rules.projection``,
    the walk the payment run charges by: prorations, the coupon's discount for each payment,
    a downgrade's new price), merged by date."""
    seller = access.seller_tax()
    streams = [[(c.date, s.SK, s, c) for c in coming_charges(s, count, tax=access.tax_terms(s, seller))] for s in subs]
    return [
        {"date": d, "sub": s, "amount": c.amount, "currency": s.Currency, "charge": c}
        for d, _, s, c in islice(heapq.merge(*streams, key=lambda item: item[:2]), count)
    ]


def monthly_totals(subs: list[Subscription]) -> list[tuple[str, int]]:
    """What a month of ``subs`` costs, per currency: each one's next payment for a whole
    month, after the coupon in force for it (``projection.next_full_month``), as the
    payment run will charge it. The caller leaves the paused ones out: nothing is charged
    for them until they resume. Only monthly ones: a yearly or two-weekly payment is not a
    month's (the list shows each one's amount per its own period)."""
    totals: dict[str, int] = defaultdict(int)
    for sub in subs:
        if not cadence_of(sub).is_monthly:
            continue
        month = next_full_month(sub, tax=access.tax_terms(sub))
        totals[sub.Currency] += month.amount if month else int(sub.PaymentAmount)
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
