"""The API's MRR and movements read from the kept rollups (docs/ANALYTICS.md, "Kept
figures"): the same body ``series.metrics_body`` makes from the recomputation, when every
day the periods need is kept whole (the day before the first, for its opening, to the
last close). Pure: the reading is ``rebuild.kept_days``'."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from billing.analytics.periods import Interval, Period
from billing.analytics.rollups import ONE_DAY, DayFigures, covers, kept_movements
from billing.analytics.series import movement_dict, only, period_dict

KEPT_KINDS = ("mrr", "movements")


def needed(periods: Sequence[Period]) -> tuple[date, date]:
    """The days a request's periods need kept: from the close of the day before the first."""
    return periods[0].first - ONE_DAY, periods[-1].close


def answerable(kind: str, kept: dict[date, DayFigures], periods: Sequence[Period]) -> bool:
    return kind in KEPT_KINDS and covers(kept, *needed(periods))


def kept_body(kind: str, kept: dict[date, DayFigures], periods: Sequence[Period], interval: Interval,
              currency: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"object": f"metrics.{kind}", "interval": interval.value, "currency": currency}
    if kind == "mrr":
        body["data"] = [{**period_dict(p), "mrr": only(currency, kept[p.close].mrr)} for p in periods]
    else:
        body["data"] = [{**period_dict(p), "currencies": {
            c: movement_dict(m) for c, m in only(currency, kept_movements(kept, p.first, p.close)).items()}}
            for p in periods]
    return body
