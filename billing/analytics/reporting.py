"""Amounts in several currencies added up in one reporting currency
(``REVENUE_REPORTING_CURRENCY``), at the European Central Bank's reference rates: the same
rate rule and source as the OSS return in euro (``billing.rules.oss_euro.ecb_rate``: the
rate published for the day, or its next publication; the latest, marked provisional, when
the day is not published yet). Each currency keeps its own line, with its rate and the
rate's date; a currency the ECB publishes no rate for is listed and left out of the total.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

from billing.analytics.mrr import Movements
from billing.rules.oss_euro import ecb_rate
from core.money import exponent, to_decimal


@dataclass(frozen=True)
class ConvertedLine:
    currency: str
    amount: int  # minor units of ``currency``
    rate: Decimal | None  # units of ``currency`` per one unit of the reporting currency; None: no rate
    published: date | None  # the ECB publication the rate is from (the latest of the two used)
    provisional: bool
    converted: int | None  # minor units of the reporting currency, rounded half up per line


@dataclass(frozen=True)
class Converted:
    reporting: str
    day: date
    lines: tuple[ConvertedLine, ...]
    total: int  # the converted lines' sum, minor units of ``reporting``

    @property
    def unconverted(self) -> tuple[str, ...]:
        return tuple(line.currency for line in self.lines if line.converted is None)

    @property
    def provisional(self) -> bool:
        return any(line.provisional for line in self.lines)


def _per_euro(currency: str, day: date) -> tuple[Decimal, date | None, bool] | None:
    if currency == "EUR":
        return Decimal(1), None, False
    rate = ecb_rate(currency, day)
    return None if rate is None else (rate.per_euro, rate.published, rate.provisional)


def cross_rate(currency: str, reporting: str, day: date) -> tuple[Decimal, date | None, bool] | None:
    """Units of ``currency`` one unit of ``reporting`` buys on ``day``, through the euro."""
    if currency == reporting:
        return Decimal(1), None, False
    ours, theirs = _per_euro(currency, day), _per_euro(reporting, day)
    if ours is None or theirs is None:
        return None
    rate = ours[0] / theirs[0]
    if reporting != "EUR":  # a cross rate, to the six significant digits the ECB publishes (shown as used)
        rate = Decimal(format(rate, ".6g"))
    published = max((d for d in (ours[1], theirs[1]) if d is not None), default=None)
    return rate, published, ours[2] or theirs[2]


def convert(amount: int, currency: str, reporting: str, rate: Decimal) -> int:
    """Minor units of ``currency`` in minor units of ``reporting``, half up (away from zero)."""
    value = to_decimal(amount, currency) / rate
    return int((value.scaleb(exponent(reporting))).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def in_reporting_currency(amounts: dict[str, int], reporting: str, day: date) -> Converted:
    """Each currency's amount on its own line, converted at the rates for ``day``."""
    reporting = reporting.upper()
    lines = []
    for currency, amount in sorted(amounts.items()):
        found = cross_rate(currency, reporting, day)
        if found is None:
            lines.append(ConvertedLine(currency, amount, None, None, False, None))
            continue
        rate, published, provisional = found
        lines.append(ConvertedLine(currency, amount, rate, published, provisional,
                                   convert(amount, currency, reporting, rate)))
    return Converted(reporting, day, tuple(lines), sum(line.converted or 0 for line in lines))


class MonthMovements(Protocol):
    """A month of movements per currency (``report.MonthRow``)."""

    month: str
    first: date
    close: date
    by_currency: Mapping[str, Movements]


@dataclass(frozen=True)
class ConvertedMovements:
    """A month's MRR movements added up in the reporting currency: the opening at the rates
    of the close before the month (so it is the month before's closing), the movements and
    the closing at the month's close, and ``fx``, what the rates' change (and each line's
    rounding) added, so that opening + new + expansion + reactivation − contraction −
    churn + fx = closing, to the minor unit."""

    month: str
    close: date
    opening: int
    new: int
    expansion: int
    reactivation: int
    contraction: int
    churn: int
    fx: int
    closing: int
    unconverted: tuple[str, ...]  # currencies without a rate on either day: left out


MOVED = ("new", "expansion", "reactivation", "contraction", "churn")


def movements_in_reporting_currency(rows: Sequence[MonthMovements], reporting: str) -> list[ConvertedMovements]:
    """Each month's movements of every currency in ``reporting``, as ChartMogul and
    Baremetrics show a multi-currency business's: converted at the rates of the day each
    figure stands at, the rates' change between the opening and the close its own line."""
    reporting = reporting.upper()
    found = []
    for row in rows:
        sums = dict.fromkeys(("opening", "closing", *MOVED), 0)
        missing = []
        for currency, m in sorted(row.by_currency.items()):
            opening, closing = (cross_rate(currency, reporting, day)
                                for day in (row.first - timedelta(days=1), row.close))
            if opening is None or closing is None:
                missing.append(currency)
                continue
            sums["opening"] += convert(m.opening, currency, reporting, opening[0])
            for name in ("closing", *MOVED):
                sums[name] += convert(getattr(m, name), currency, reporting, closing[0])
        moved = sums["new"] + sums["expansion"] + sums["reactivation"] - sums["contraction"] - sums["churn"]
        found.append(ConvertedMovements(row.month, row.close, **sums, fx=sums["closing"] - sums["opening"] - moved,
                                        unconverted=tuple(missing)))
    return found
