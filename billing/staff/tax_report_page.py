"""The quarter's VAT report for the finance role, one per seller: per country and rate the
net and tax of the invoices less the credit notes issued in the quarter, the reverse-charge sales per
customer's VAT number, and the same as a CSV file (as ``manage.py tax_report`` gives it).
One Query of the quarter's ledger partition, whatever the number of payments."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.rules.oss_euro import oss_return
from billing.rules.tax import Treatment, quarter_of
from billing.rules.tax_report import BadQuarter, csv_text, parse_quarter, previous_quarters
from core.clock import billing_today
from core.staff import render_staff

QUARTERS_OFFERED = 8  # two years of returns to pick from; any other by its URL
TREATMENT_LABELS = {
    Treatment.DOMESTIC: _("Domestic"),
    Treatment.OSS: _("One-Stop Shop (OSS)"),
    Treatment.REVERSE_CHARGE: _("Reverse charge"),
    Treatment.REGISTERED: _("Registered outside the EU"),
    Treatment.NOT_SUBJECT: _("Not subject to VAT"),
}


def tax_report(request: HttpRequest) -> HttpResponse:
    current = quarter_of(billing_today(settings.BILLING_TIMEZONE))
    choices = previous_quarters(current, QUARTERS_OFFERED)
    title = gettext("Tax report")
    try:
        quarter = parse_quarter(request.GET.get("quarter") or current)
    except BadQuarter:  # a typo in the URL: say so, read nothing
        return render_staff(request, "staff/tax_report.html", title, {
            "choices": choices, "quarter": None, "error": True}, status=400)
    reports = access.quarter_tax_reports(quarter)
    if request.GET.get("format") == "csv":
        response = HttpResponse(csv_text(reports), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="tax-report-{quarter}.csv"'
        return response
    return render_staff(request, "staff/tax_report.html", title, {
        "choices": choices if quarter in choices else [quarter, *choices],
        "quarter": quarter,
        # One section per seller (its OSS return in euro its own); none: the empty tables.
        "sellers": [{
            "report": report,
            "lines": [{"line": line, "treatment": TREATMENT_LABELS.get(line.treatment, line.treatment)}
                      for line in report.lines],
            "customers": report.customers,
            "oss_euro": oss_return(report),
        } for report in reports] or [{"report": None, "lines": [], "customers": [], "oss_euro": None}],
    })
