"""The quarter's VAT report, from the quarter's ledger items (``TaxTotal``): pure.

The payment run and every refund add their figures to the ledger in their own
transaction (a credit note's are negative, in the quarter it is issued), spread over
write shards; the report sums the shards back:

* one line per country, rate, currency and treatment: the net and tax of the quarter's
  invoices less its credit notes (the OSS return's lines are those of treatment ``oss``);
* one line per reverse-charged customer's VAT number and currency: the net sold to it
  (no tax: the customer accounts for it).

One report per seller (``build_reports``): the ledger's keys name the seller of each
invoice (its VAT number), so a quarter in which the seller changed gives two reports,
each the sum of its own invoices and credit notes. Items written before the seller was
in the key make a report of their own, whose seller is not recorded (``seller=None``).

Amounts stay integers in minor units here; :meth:`ReportLine.as_dict` gives them as
decimal strings in the currency's units (``"1234.50"``, ``"500"`` for JPY), never floats.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from billing.rules.invoice_tax import rate_text as stored_rate_text
from billing.rules.tax import Treatment, country_of
from core.money import decimal_string

REVERSE_CHARGE_KEY = "RC"  # the sort key's first part on the per-customer items
SELLER_KEY = "SELLER"  # the first part of a key that names its seller
NO_VAT_NUMBER = "-NOVAT"  # after the country, for a seller without a VAT number


def seller_key(vat_number: str | None, country: str | None) -> str:
    """The seller as the ledger's keys name it: its VAT number (``IT00743110157``), or,
    without one, its country (``US-NOVAT``)."""
    number = "".join((vat_number or "").split()).upper().replace("#", "")
    return number or f"{(country or '').upper().replace('#', '')}{NO_VAT_NUMBER}"


class BadQuarter(ValueError):
    """A quarter that is not ``YYYYQn`` with n from 1 to 4."""


def parse_quarter(text: str) -> str:
    """``"2026q4 "`` -> ``"2026Q4"``; anything else that is not a quarter: ``BadQuarter``."""
    cleaned = (text or "").strip().upper()
    if not (len(cleaned) == 6 and cleaned[:4].isdigit() and cleaned[:4].isascii() and cleaned[4] == "Q"
            and cleaned[5] in "1234"):
        raise BadQuarter(f"{text!r} is not a quarter: give it as YYYYQn, n from 1 to 4 (e.g. 2026Q4)")
    return cleaned


def previous_quarters(quarter: str, count: int) -> list[str]:
    """``quarter`` and the ``count - 1`` before it, newest first (the page's choices)."""
    cleaned = parse_quarter(quarter)
    index = int(cleaned[:4]) * 4 + int(cleaned[5]) - 1
    return [f"{i // 4}Q{i % 4 + 1}" for i in range(index, index - count, -1)]


def rate_text(rate: str | Decimal) -> str:
    """A rate as the report shows it: as the invoices store it (``"22.0"`` is ``"22"``);
    a text that is no number, as it is."""
    try:
        return stored_rate_text(Decimal(str(rate)))
    except InvalidOperation:
        return str(rate)


def _rate_order(rate: str) -> tuple[int, Decimal | str]:
    try:
        return (0, Decimal(rate))
    except InvalidOperation:
        return (1, rate)


@dataclass(frozen=True)
class LedgerRow:
    """One ledger item as the report reads it. ``vat_number`` is set on the per-customer
    reverse-charge items, whose figures are the net alone."""

    country: str
    rate: str
    currency: str
    treatment: str
    net: int
    tax: int = 0
    gross: int = 0
    invoices: int = 0
    vat_number: str | None = None
    seller: str | None = None  # ``seller_key``; None: written before the seller was in the key
    seller_name: str | None = None
    seller_country: str | None = None


def ledger_row(sort_key: str, *, net: int | None, tax: int | None = None, gross: int | None = None,
               invoices: int | None = None, seller_name: str | None = None,
               seller_country: str | None = None) -> LedgerRow:
    """A ledger item from its sort key: ``SELLER#<seller>#`` then
    ``<country>#<rate>#<currency>#<treatment>#<shard>`` or ``RC#<vat number>#<currency>``
    (the number carries its country's prefix); the same without ``SELLER#<seller>#`` for
    the items written before the seller was in the key."""
    parts = sort_key.split("#")
    seller = None
    if parts[0] == SELLER_KEY and len(parts) > 2 and parts[1]:
        seller, parts = parts[1], parts[2:]
    names = {"seller": seller, "seller_name": seller_name if seller else None,
             "seller_country": seller_country if seller else None}
    if parts[0] == REVERSE_CHARGE_KEY and len(parts) == 3:
        _, vat_number, currency = parts
        return LedgerRow(country=country_of(vat_number[:2]), rate="0", currency=currency.upper(),
                         treatment=Treatment.REVERSE_CHARGE, net=int(net or 0), vat_number=vat_number, **names)
    if len(parts) != 5:
        raise ValueError(f"not a tax ledger key: {sort_key!r}")
    country, rate, currency, treatment, _shard = parts
    return LedgerRow(country=country.upper(), rate=rate_text(rate), currency=currency.upper(), treatment=treatment,
                     net=int(net or 0), tax=int(tax or 0), gross=int(gross or 0), invoices=int(invoices or 0),
                     **names)


@dataclass(frozen=True)
class ReportLine:
    country: str
    rate: str  # percent, as rate_text gives it
    currency: str
    treatment: str
    net: int  # minor units
    tax: int
    gross: int
    invoices: int  # invoices issued in the quarter (credit notes are not counted; 0 per customer)
    vat_number: str | None = None  # the per-customer reverse-charge lines

    @property
    def reverse_charge(self) -> bool:
        return self.treatment == Treatment.REVERSE_CHARGE

    def as_dict(self) -> dict[str, str | bool]:
        """The JSON and CSV shape: amounts as decimal strings in the currency's units."""
        line: dict[str, str | bool] = {
            "country": self.country, "rate": self.rate, "net": decimal_string(self.net, self.currency),
            "tax": decimal_string(self.tax, self.currency), "currency": self.currency,
            "reverse_charge": self.reverse_charge, "treatment": self.treatment,
        }
        if self.vat_number:
            line["vat_number"] = self.vat_number
        return line


@dataclass(frozen=True)
class TaxReport:
    quarter: str
    lines: tuple[ReportLine, ...]  # per country, rate, currency and treatment (reverse charge too)
    customers: tuple[ReportLine, ...]  # reverse charge per customer's VAT number and currency
    seller: str | None = None  # ``seller_key`` (its VAT number); None: not recorded (old items)
    seller_name: str | None = None
    seller_country: str | None = None

    def exported(self) -> list[ReportLine]:
        """What the JSON and CSV list: the taxed lines, then reverse charge per customer, so
        that each sale is counted once (the per-country reverse-charge totals are their sum)."""
        return [line for line in self.lines if not line.reverse_charge] + list(self.customers)

    def tax_by_rate(self) -> dict[tuple[str, str, str], int]:
        """Tax per (country, rate, currency), for checks against the invoices."""
        totals: dict[tuple[str, str, str], int] = {}
        for line in self.lines:
            key = (line.country, line.rate, line.currency)
            totals[key] = totals.get(key, 0) + line.tax
        return totals


def _line_order(line: ReportLine) -> tuple:
    return (line.country, _rate_order(line.rate), line.currency, line.treatment, line.vat_number or "")


def build_report(quarter: str, rows: Iterable[LedgerRow]) -> TaxReport:
    """Sum the shards: the report of ``quarter`` from its ledger rows, in any order.
    Lines that sum to nothing at all (a sale and its full credit note) stay: the return
    still declares the country and rate with 0."""
    sums: dict[tuple, list[int]] = {}
    for row in rows:
        key = (row.country, rate_text(row.rate), row.currency, row.treatment, row.vat_number)
        total = sums.setdefault(key, [0, 0, 0, 0])
        total[0] += row.net
        total[1] += row.tax
        total[2] += row.gross
        total[3] += row.invoices
    made = [ReportLine(country=c, rate=r, currency=cur, treatment=t, net=n, tax=x, gross=g, invoices=i, vat_number=v)
            for (c, r, cur, t, v), (n, x, g, i) in sums.items()]
    lines = sorted((line for line in made if not line.vat_number), key=_line_order)
    customers = sorted((line for line in made if line.vat_number), key=_line_order)
    return TaxReport(quarter=quarter, lines=tuple(lines), customers=tuple(customers))


def build_reports(quarter: str, rows: Iterable[LedgerRow]) -> list[TaxReport]:
    """One report per seller, by its VAT number (sellers in that order; the totals whose
    seller is not recorded last): each sums only its own seller's rows, so no seller's
    return holds another's sales."""
    by_seller: dict[str | None, list[LedgerRow]] = {}
    for row in rows:
        by_seller.setdefault(row.seller, []).append(row)
    reports = []
    for seller in sorted(by_seller, key=lambda key: (key is None, key or "")):
        named = next((row for row in by_seller[seller] if row.seller_name or row.seller_country), None)
        report = build_report(quarter, by_seller[seller])
        reports.append(TaxReport(quarter=quarter, lines=report.lines, customers=report.customers, seller=seller,
                                 seller_name=named.seller_name if named else None,
                                 seller_country=named.seller_country if named else None))
    return reports


CSV_COLUMNS = ("seller", "country", "rate", "currency", "treatment", "net", "tax", "reverse_charge", "vat_number")


def _csv_field(value: str | bool) -> str:
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    # RFC 4180 quoting, should a field ever hold a separator (ours are codes and numbers).
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"\r\n') else text


def exported_dicts(reports: Iterable[TaxReport]) -> list[dict[str, str | bool | None]]:
    """Every seller's exported lines, each with its ``seller`` (its VAT number; None for
    totals whose seller is not recorded): the JSON and the CSV."""
    return [{"seller": report.seller, **line.as_dict()} for report in reports for line in report.exported()]


def csv_text(reports: Iterable[TaxReport]) -> str:
    """The exported lines of every seller's report as CSV with a header row (CRLF line
    ends, as RFC 4180 says); ``seller`` empty where it is not recorded."""
    rows = [CSV_COLUMNS] + [tuple(line.get(column) or "" if column == "seller" else line.get(column, "")
                                  for column in CSV_COLUMNS) for line in exported_dicts(reports)]
    return "".join(",".join(_csv_field(value) for value in row) + "\r\n" for row in rows)
