"""Revenue analytics (docs/ANALYTICS.md): MRR per currency, its movements, churn and
retention cohorts, computed from the subscriptions and their audit history.

A layer above ``access`` and ``rules``, below the staff pages and the commands: it never
imports actions, batches, views, staff or the API. ``history``, ``mrr``, ``retention``
and ``report`` are pure; ``reading`` reads the table. The staff page and
``manage.py revenue_report`` both call :func:`revenue_report`.
"""

from __future__ import annotations

from datetime import date

from django.conf import settings

from billing.analytics.reading import read_histories
from billing.analytics.report import BadMonth, RevenueReport, build_report, parse_month
from core.clock import billing_today


def revenue_report(month: str | None = None, *, today: date | None = None) -> RevenueReport:
    """The report on ``month`` (``YYYY-MM``; default: the month under way) as of today.
    ``BadMonth`` for a month that is not one, or is still to come."""
    today = today or billing_today(settings.BILLING_TIMEZONE)
    chosen = parse_month(month, today) if month else None
    return build_report(read_histories(), today=today, month=chosen)


__all__ = ["BadMonth", "RevenueReport", "revenue_report"]
