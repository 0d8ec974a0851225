"""A metered subscription's usage page: the period the next payment bills, day by day, as a
chart and a table, beside what that payment is as it stands. The customer's own
subscription only (another's id is not found); a subscription without a metered price has
no such page (404)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from billing import access
from billing.access import usage as metered
from billing.customers import customer_required
from billing.models import MeterAggregation
from billing.operations import payments
from billing.operations.final_usage import last_usage_charge
from billing.rules.price_objects import price_words_of, terms_of
from billing.rules.price_words import part_words
from billing.rules.pricing import amount_parts
from billing.views.common import subscription_or_404
from core.pages import or_404, today

CHART_HEIGHT = 120  # the chart's drawing units: a bar's height is its day's share of the most
BAR_STEP = 12  # a bar and its gap, in the same units (a month of days: 372, scaled to fit)

# Over a period, a count or a sum is its days' added up; the others are not (a period's
# maximum is its largest day's, its distinct values are counted over the whole period).
ADDS_UP = {MeterAggregation.COUNT, MeterAggregation.SUM}


@dataclass(frozen=True)
class UsageDay:
    day: date
    value: int | Decimal
    x: int
    y: int
    height: int


def chart_days(used: dict[date, int | Decimal], first: date, last: date) -> list[UsageDay]:
    """Every day ``first``..``last`` (a day without usage at 0), scaled to the busiest."""
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    most = max((used.get(d, 0) for d in days), default=0) or 1
    bars = []
    for n, day in enumerate(days):
        value = used.get(day, 0)
        height = round(CHART_HEIGHT * float(value) / float(most)) if value else 0
        bars.append(UsageDay(day, value, n * BAR_STEP, CHART_HEIGHT - height, height))
    return bars


def _day(iso: str | None) -> date | None:
    return date.fromisoformat(iso) if iso else None


@require_safe
@customer_required
def subscription_usage(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """One metered price's usage (``?meter=``, an event name; default: the first), with
    links to the subscription's other meters. Requests: the subscription's, each metered
    price's GetItem; when a payment bills usage, the estimate's (the seller's profile, each
    meter's GetItem and Query: what the payment reads, so the amount is the one charged)
    and the days' (the meter's GetItem again, one Query). A subscription cancelled at its
    period's end shows its last usage charge, made the day after its last day, by the
    function that charges it."""
    sub = subscription_or_404(account_id, sub_id)
    prices = or_404(access.metered_prices(sub) if sub.MeteredPriceId else None, _("This subscription has no usage."))
    wanted = request.GET.get("meter")
    # A meter's price billing today: one replacing it comes first the day after its last.
    starts, day = sub.metered_starts, today().isoformat()
    billing = [p for p in prices.values() if starts.get(p.PriceId, day) <= day]
    price = next((p for p in billing if p.Meter == wanted), billing[0] if billing else next(iter(prices.values())))
    replacement = next((p for p in prices.values() if p.Meter == price.Meter and p.PriceId in starts
                        and starts[p.PriceId] > day), None)
    # Cancelled at its period's end: its last usage charge, the day after, as it stands.
    final = last_usage_charge(sub, today(), prices=prices)
    coming = final or (payments.next_charge(sub, metered_prices=prices) if sub.NextPaymentDate and sub.is_live
                      else None)
    usage = next((u for u in coming.usages if u.price_id == price.PriceId), None) if coming is not None else None
    terms = terms_of(price)
    context = {"sub": sub, "words": price_words_of(price), "meter": price.Meter,
               "meters": meters if len(meters := list(dict.fromkeys(p.Meter for p in prices.values()))) > 1 else [],
               "usage": usage, "amount": coming.amount if coming is not None else None,
               "billed_on": final.date if final is not None else None,
               # removed: its usage is billed through that day only (replaced: at its price)
               "ends_on": _day(sub.metered_ends.get(price.PriceId)),
               "replaced_by": price_words_of(replacement) if replacement is not None else None,
               "replaced_from": _day(starts.get(replacement.PriceId)) if replacement is not None else None}
    if usage is not None:
        meter = or_404(metered.get_meter(price.Meter), _("This subscription has no usage."))
        last = min(usage.end - timedelta(days=1), today())
        days = chart_days(metered.usage_by_day(meter, sub.account_id, usage.start, last + timedelta(days=1)),
                          usage.start, last) if last >= usage.start else []
        # how the usage so far's amount adds up, tier by tier: the lines sum to it exactly
        parts = [(part_words(p, sub.Currency, price.UnitLabel), p.amount) for p in amount_parts(terms, usage.quantity)]
        context.update(days=days, last_day=usage.end - timedelta(days=1), adds_up=meter.Aggregation in ADDS_UP,
                       parts=parts,
                       chart_width=max(len(days) * BAR_STEP, BAR_STEP), chart_height=CHART_HEIGHT)
    return render(request, "portal/subscription_usage.html", context)
