"""``python manage.py revenue_report [--month YYYY-MM] [--json]``: MRR per currency, a year
of monthly movements, the month's churn and the retention cohorts: the staff Revenue
page's figures (the same function makes both: billing/analytics). Reads the items
``revenue_rebuild`` keeps when they cover the month, else every account's items through the
access layer (docs/ANALYTICS.md, "How it reads"): no Scan; it says which."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError

from billing.analytics import MAX_MONTHS_SHOWN, BadMonth, RevenueReport, revenue_report
from core.dynamo.command import BillingCommand
from core.money import decimal_string

MOVEMENT_COLUMNS = ("opening", "new", "expansion", "reactivation", "contraction", "churn", "closing")


class Command(BillingCommand):
    help = ("Revenue figures: MRR per currency at the month's close (today for the month under way), the "
            "movements of the twelve months ending with it, or from --from (new, expansion, reactivation, contraction, churn), "
            "customer and revenue churn, and the cohorts by month of first payment. JSON: amounts in minor units.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--month", help="the month, YYYY-MM (default: the month under way)")
        parser.add_argument("--from", dest="since",
                            help=f"the first month shown, YYYY-MM (default: the twelve months ending with "
                                 f"--month; at most {MAX_MONTHS_SHOWN})")
        parser.add_argument("--json", action="store_true", help="the figures as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = revenue_report(options["month"], since=options["since"])
        except BadMonth as error:
            if options["since"]:
                raise CommandError(f"--from {options['since']} to --month: not months (YYYY-MM) in order, "
                                   f"none still to come, at most {MAX_MONTHS_SHOWN} in all") from None
            raise CommandError(f"--month {error}: not a month (YYYY-MM), or one still to come") from None
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            self.stdout.write(text(report), ending="")


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value}%"


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    return ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths,
                                                                                          strict=True))).rstrip()
            for row in (headers, *rows)]


def text(report: RevenueReport) -> str:
    source = ("kept (read from revenue_rebuild's items)" if report.source == "kept"
              else "recomputed (every account's history read now: revenue_rebuild has not kept this month)")
    lines = [f"Revenue report for {report.month} (figures at the close of {report.close})", f"Figures: {source}",
             "", "MRR:"]
    lines += [f"  {decimal_string(amount, currency)} {currency}" for currency, amount in report.mrr.items()] \
        or ["  none"]
    lines.append("Not counted: " + ", ".join(f"{n} {reason.value}" for reason, n in report.excluded.items()))
    for currency in report.currencies:
        rows = [(row.month, *(decimal_string(getattr(m, c), currency) for c in MOVEMENT_COLUMNS))
                for row in report.months if (m := row.by_currency.get(currency))]
        lines += ["", f"Movements, {currency}:", *_table(("month", *MOVEMENT_COLUMNS), rows)]
    if currencies := report.usage_currencies:
        rows = [(row.month, *(decimal_string(row.usage.get(c, 0), c) for c in currencies),
                 decimal_string(conv.total, conv.reporting) + (f" (without {', '.join(conv.unconverted)})"
                                                              if conv.unconverted else ""))
                for row, conv in zip(report.months, report.usage_months_reporting, strict=True)]
        reporting = report.usage_months_reporting[0].reporting
        lines += ["", "Usage revenue per month (charges paid in it, excluding tax):",
                  *_table(("month", *currencies, f"in {reporting}"), rows)]
    churn = report.customer_churn
    lines += ["", f"Customer churn: {churn.lost} of {churn.at_start} ({_rate(churn.rate)})"]
    lines += [f"Revenue churn, {r.currency}: gross {_rate(r.gross_rate)}, net {_rate(r.net_rate)}"
              for r in report.revenue_churn]
    if (conv := report.reporting) is not None and conv.lines:
        lines += ["", f"MRR in {conv.reporting} at the ECB's reference rates:"]
        lines += [f"  {decimal_string(line.amount, line.currency)} {line.currency}"
                  + (f" at {line.rate} per {conv.reporting} ({line.published}{'*' if line.provisional else ''})"
                     if line.rate is not None and line.currency != conv.reporting else "")
                  + (f" = {decimal_string(line.converted, conv.reporting)} {conv.reporting}"
                     if line.converted is not None else " (no ECB rate: not in the total)")
                  for line in conv.lines]
        lines.append(f"  total {decimal_string(conv.total, conv.reporting)} {conv.reporting}")
    if (f := report.figures) is not None:
        lines += ["", f"Paying customers: {f.paying_customers}",
                  f"Free trials started: {f.trials_started}",
                  f"Trial-to-paid conversion: {f.trials.part} of {f.trials.whole} ({_rate(f.trials.rate)})",
                  f"Failed-payment recovery: {f.recovery.part} of {f.recovery.whole} ({_rate(f.recovery.rate)})"]
        for c in f.by_currency:
            money = c.currency
            lines.append(
                f"{money}: ARR {decimal_string(c.arr, money)}, ARPA "
                f"{'-' if c.arpa is None else decimal_string(c.arpa, money)}, net revenue retention "
                f"{_rate(c.net_retention)}, gross {_rate(c.gross_retention)}, refunds {c.refunds} "
                f"({decimal_string(c.refunded, money)}), disputes {c.disputes} ({decimal_string(c.disputed, money)}), "
                f"usage revenue {decimal_string(c.usage, money)}")
    if (conv := report.usage_reporting) is not None and conv.lines:
        lines.append(f"Usage revenue in {conv.reporting} at the same rates: "
                     f"{decimal_string(conv.total, conv.reporting)} {conv.reporting}"
                     + (f" (no ECB rate, not in it: {', '.join(conv.unconverted)})" if conv.unconverted else ""))
    lines += ["", "Cohorts (customers still paying after N months):"]
    lines += _table(("cohort", "customers", *(f"+{n}" for n in range(len(report.cohorts)))),
                    [(c.month, str(c.size), *(_rate(s) for s in c.shares), *([""] * (len(report.cohorts) - len(c.shares))))
                     for c in report.cohorts])
    for currency, grid in report.mrr_cohorts.items():
        if any(c.size for c in grid):
            lines += ["", f"MRR retention, {currency} (cohorts of first payments in it: MRR at the first close, "
                          "then its share at each close since):"]
            lines += _table(("cohort", "customers", "mrr", *(f"+{n}" for n in range(len(grid)))),
                            [(c.month, str(c.size), decimal_string((c.mrr or (0,))[0], currency),
                              *(_rate(s) for s in c.mrr_shares), *([""] * (len(grid) - len(c.mrr_shares))))
                             for c in grid])
    return "\n".join(lines) + "\n"
