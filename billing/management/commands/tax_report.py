"""``python manage.py tax_report --quarter 2026Q4 [--format table|csv|json]``: the quarter's
VAT per seller, country and rate (invoices less credit notes) and the reverse-charge sales
per customer's VAT number, from the quarter's ledger items (a handful of Queries, no Scan)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError

from billing import access
from billing.rules.oss_euro import oss_return
from billing.rules.tax_report import (
    BadQuarter,
    ReportLine,
    TaxReport,
    csv_text,
    exported_dicts,
    parse_quarter,
)
from core.dynamo.command import BillingCommand
from core.money import decimal_string

FORMATS = ("table", "csv", "json")


class Command(BillingCommand):
    help = ("The quarter's VAT report, one per seller: per country, rate and currency the net and tax of the invoices less the "
            "credit notes issued in the quarter, and the reverse-charge sales per customer's VAT number. "
            "Amounts in the currency's units (JSON and CSV: decimal strings).")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--quarter", required=True, help="the quarter, YYYYQn (e.g. 2026Q4)")
        parser.add_argument("--format", choices=FORMATS, default="table",
                            help="table (default), csv (with a header row) or json (a list of objects)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            quarter = parse_quarter(options["quarter"])
        except BadQuarter as error:
            raise CommandError(f"--quarter {error}") from None
        reports = access.quarter_tax_reports(quarter)
        if options["format"] == "json":
            self.stdout.write(json.dumps(exported_dicts(reports), indent=2))
        elif options["format"] == "csv":
            self.stdout.write(csv_text(reports), ending="")
        elif not reports:
            self.stdout.write(f"{quarter}: no invoices or credit notes recorded.\n", ending="")
        else:
            self.stdout.write("\n".join(table_text(report) for report in reports), ending="")


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]], numeric: set[int]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(cell.rjust(w) if i in numeric else cell.ljust(w)
                         for i, (cell, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(headers), *(line(row) for row in rows)]


def _amount(line: ReportLine, amount: int) -> str:
    return decimal_string(amount, line.currency)


def seller_title(report: TaxReport) -> str:
    """``Rpay S.r.l. (IT00743110157)``; the totals written before sellers were in the key:
    ``not recorded``."""
    if report.seller is None:
        return "not recorded (totals written before the ledger named its seller)"
    return f"{report.seller_name} ({report.seller})" if report.seller_name else report.seller


def table_text(report: TaxReport) -> str:
    """A seller's tables for a person: the lines per country and rate, the OSS return in
    euro, then reverse charge per customer."""
    if not report.lines and not report.customers:
        return f"{report.quarter}: no invoices or credit notes recorded.\n"
    out = [f"VAT {report.quarter}, seller {seller_title(report)}: invoices less credit notes, per country and rate"]
    out += _table(("country", "rate %", "treatment", "currency", "net", "tax", "invoices"),
                  [(line.country, line.rate, line.treatment, line.currency, _amount(line, line.net),
                    _amount(line, line.tax), str(line.invoices)) for line in report.lines], numeric={1, 4, 5, 6})
    euro = oss_return(report)
    if euro.lines or euro.unconverted:
        out += ["", f"OSS return {report.quarter} in euro, at the ECB's rate for {euro.last_day.isoformat()}"
                    + (" (provisional: that rate is not published yet)" if euro.provisional else "")]
        out += _table(("country", "rate %", "currency", "ECB rate", "published", "net EUR", "tax EUR"),
                      [(e.line.country, e.line.rate, e.line.currency, str(e.rate.per_euro) if e.rate else "",
                        e.rate.published.isoformat() if e.rate else "", decimal_string(e.net_cents, "EUR"),
                        decimal_string(e.tax_cents, "EUR")) for e in euro.lines]
                      + [("total", "", "", "", "", decimal_string(euro.net_cents, "EUR"),
                          decimal_string(euro.tax_cents, "EUR"))], numeric={1, 3, 5, 6})
        for line in euro.unconverted:
            out.append(f"not converted: {line.country} {line.rate}% {line.currency} "
                       f"(the ECB publishes no reference rate for {line.currency})")
    if report.customers:
        out += ["", f"Reverse charge {report.quarter}, per customer's VAT number"]
        out += _table(("vat number", "country", "currency", "net"),
                      [(line.vat_number or "", line.country, line.currency, _amount(line, line.net))
                       for line in report.customers], numeric={3})
    return "\n".join(out) + "\n"
