"""Revenue figures (docs/ANALYTICS.md): the same numbers as the staff Revenue page, per
period. Any live key may read them (they are reads, as billing/api/reads.py's). MRR,
movements and monthly cohorts come from the kept rollups (and cohort items) when they cover
the periods (one Query of the kept months, or one a month of the kept days for days, one of
a filtered view's days; one more of the cohorts); otherwise a call reads every
account's history (docs/ANALYTICS.md, "How it reads"): a
report's read, not a look-up's; a request that cannot be answered is a 400 naming its field
before anything is read."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router, Schema
from pydantic import Field

from billing.analytics import BadRange, revenue_metrics
from billing.api.auth import read_key
from billing.api.errors import ApiError
from billing.api.schemas import ErrorOut

router = Router(auth=read_key, tags=["metrics"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 429: ErrorOut}


class Range(Schema):
    # ``from`` is a Python keyword: the field is ``start`` under the name callers send.
    start: str | None = Field(None, alias="from", max_length=20, description="first month, YYYY-MM "
                              "(default: the eleventh month before `to`)")
    to: str | None = Field(None, max_length=20, description="last month, YYYY-MM (default: the month under way)")
    interval: str | None = Field(None, max_length=20, description="day, month (default), quarter or year")
    currency: str | None = Field(None, max_length=20, description="only this currency (ISO 4217)")
    product: str | None = Field(None, max_length=64, description="only the subscriptions to this product (SKU), "
                                "while they are to it: a switch in is new, a switch out churn")
    price_interval: str | None = Field(None, max_length=20, description="only the subscriptions of prices "
                                       "of this interval: day, week, month or year")


def answer(kind: str, query: Range) -> JsonResponse:
    try:
        return JsonResponse(revenue_metrics(kind, from_month=query.start, to_month=query.to,
                                            interval=query.interval, currency=query.currency,
                                            product=query.product, price_interval=query.price_interval))
    except BadRange as error:
        raise ApiError(400, error.message, param=error.field) from None


def route(kind: str, summary: str) -> Callable[[HttpRequest, Range], JsonResponse]:
    def view(request: HttpRequest, query: Query[Range]) -> JsonResponse:
        return answer(kind, query)

    view.__name__ = f"metrics_{kind}"
    view.__doc__ = summary
    return router.get(f"/metrics/{kind}", response={200: dict, **ERRORS}, summary=summary,
                      operation_id=f"metrics_{kind}")(view)


route("mrr", "MRR per currency at the close of each period")
route("movements", "MRR movements per currency in each period (opening, new, expansion, reactivation, "
                   "contraction, churn, closing)")
route("cohorts", "Customers by period of first payment, and how many still pay at the close of each period since")
